/**
 * Which remotes git may talk to, and how credentials reach it for one
 * invocation. Credentials travel only in the child's environment (readable by
 * the same user alone), never in arguments (the process list), never in a URL
 * and never in `.git/config`; ssh keys live in a 0600 file for the duration of
 * one git command.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { devNull, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import type { GitCredentials } from '../run/ports.js';
import { isLoopbackHost, type RemoteUrl } from '../model/repository-url.js';

/** Environment and redaction list for one git invocation. */
export interface GitAuth {
  /** Merge into the git process's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Literal values to scrub from anything the invocation reports. */
  readonly secrets: readonly string[];
}

function assertHeaderSafe(value: string, field: string): void {
  // A CR or LF would end the Authorization header and start another one.
  if (/[\r\n\0]/.test(value)) throw new ValidationError([{ field, message: 'contains a line break or NUL' }]);
}

/** Checks that the credentials suit the remote; nothing is written yet. */
function assertCredentialsFit(remote: RemoteUrl, credentials: GitCredentials): void {
  const field = 'credentials';
  if (credentials.kind === 'ssh') {
    if (remote.kind !== 'ssh') throw new ValidationError([{ field, message: `an ssh key needs an ssh remote, not ${remote.kind}` }]);
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(credentials.privateKey)) {
      throw new ValidationError([{ field: 'credentials.privateKey', message: 'is not a PEM or OpenSSH private key' }]);
    }
    return;
  }
  if (remote.kind !== 'https' && remote.kind !== 'http') {
    throw new ValidationError([{ field, message: `${credentials.kind} credentials need an https remote, not ${remote.kind}` }]);
  }
  // Plain http would show the credential to anyone on the path; loopback is the test servers.
  if (remote.kind === 'http' && !isLoopbackHost(remote.host)) {
    throw new ValidationError([{ field, message: 'are only sent over https (plain http only to a loopback address)' }]);
  }
  const username = credentials.username;
  const secret = credentials.kind === 'basic' ? credentials.password : credentials.token;
  if (secret.length === 0) throw new ValidationError([{ field, message: `${credentials.kind === 'basic' ? 'password' : 'token'} is empty` }]);
  assertHeaderSafe(secret, field);
  if (username !== undefined) {
    assertHeaderSafe(username, 'credentials.username');
    if (username.includes(':')) throw new ValidationError([{ field: 'credentials.username', message: 'must not contain ":"' }]);
  }
}

/** Quotes one word for the POSIX shell git runs GIT_SSH_COMMAND with. */
function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * GitHub documents `x-access-token` as the user name for installation tokens;
 * GitLab and Gitea accept any non-empty user name with a token as password.
 */
const TOKEN_USERNAME = 'x-access-token';

function httpAuth(remote: RemoteUrl, username: string, secret: string): GitAuth {
  const basic = Buffer.from(`${username}:${secret}`, 'utf8').toString('base64');
  return {
    env: {
      GIT_CONFIG_COUNT: '2',
      // No helper may store or offer a credential of its own.
      GIT_CONFIG_KEY_0: 'credential.helper',
      GIT_CONFIG_VALUE_0: '',
      // Scoped by URL so the header goes to this server only, not to another host a
      // submodule or an alternate might name.
      GIT_CONFIG_KEY_1: `http.${remote.origin ?? ''}.extraHeader`,
      GIT_CONFIG_VALUE_1: `Authorization: Basic ${basic}`,
    },
    secrets: [secret, basic, encodeURIComponent(secret), `${username}:${secret}`],
  };
}

/**
 * Runs `use` with the environment that authenticates one git invocation against
 * `remote`, then removes whatever it wrote (the ssh key and known_hosts files).
 *
 * - basic / token over http(s): `http.<origin>.extraHeader=Authorization: Basic …`
 *   through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`; a token's
 *   user name defaults to `x-access-token`.
 * - ssh: the key in a 0600 file in a private temp dir and
 *   `GIT_SSH_COMMAND=ssh -i KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=FILE -o StrictHostKeyChecking=yes`.
 *   Without `knownHosts` only the image's global known-hosts file
 *   (`/etc/ssh/ssh_known_hosts`) can vouch for the host: an unknown host key fails.
 * - no credentials, or a file / git:// remote: nothing.
 *
 * @throws ValidationError when the credentials do not suit the remote (an ssh
 *   key for https, a password over plain http to a non-loopback host, a line
 *   break in a token)
 */
export async function withGitAuth<T>(remote: RemoteUrl, credentials: GitCredentials | undefined, use: (auth: GitAuth) => Promise<T>): Promise<T> {
  if (!credentials) return use({ env: {}, secrets: [] });
  assertCredentialsFit(remote, credentials);
  if (credentials.kind === 'basic') return use(httpAuth(remote, credentials.username, credentials.password));
  if (credentials.kind === 'token') return use(httpAuth(remote, credentials.username ?? TOKEN_USERNAME, credentials.token));

  // mkdtemp creates the directory 0700: no other user can list or open the key.
  const dir = await mkdtemp(join(tmpdir(), 'gitops-scaffolder-ssh-'));
  try {
    const keyFile = join(dir, 'id');
    // OpenSSH refuses a key without its final newline, and one with CRLF line ends.
    const key = credentials.privateKey.replace(/\r\n/g, '\n').replace(/\n*$/, '\n');
    await writeFile(keyFile, key, { mode: 0o600, flag: 'wx' });
    let knownHostsFile = devNull;
    if (credentials.knownHosts !== undefined) {
      knownHostsFile = join(dir, 'known_hosts');
      await writeFile(knownHostsFile, credentials.knownHosts.replace(/\n*$/, '\n'), { mode: 0o600, flag: 'wx' });
    }
    const command = [
      'ssh',
      // The user's ~/.ssh/config must not add hosts, keys, proxies or agents.
      '-F',
      devNull,
      '-i',
      shellQuote(keyFile),
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'IdentityAgent=none',
      '-o',
      'BatchMode=yes',
      '-o',
      `UserKnownHostsFile=${shellQuote(knownHostsFile)}`,
      '-o',
      'StrictHostKeyChecking=yes',
    ].join(' ');
    const keyLines = key.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
    return await use({ env: { GIT_SSH_COMMAND: command, GIT_SSH_VARIANT: 'ssh' }, secrets: [key.trim(), ...keyLines] });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
