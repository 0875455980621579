import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { UnavailableError, ValidationError } from '../errors.js';
import type { GitCredentials } from '../run/ports.js';
import { withGitAuth } from './git-auth.js';
import { parseRepositoryUrl } from '../model/repository-url.js';
import { runGit } from './git-process.js';
import { closedPort } from '../../test/support/net.js';

/** Not a real key: it only has to look like one. */
const FAKE_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----';

describe('withGitAuth', () => {
  it('gives no environment without credentials', async () => {
    const auth = await withGitAuth(parseRepositoryUrl('https://git.example.net/r.git'), undefined, async (a) => a);
    assert.deepEqual(auth, { env: {}, secrets: [] });
  });

  it('sends basic credentials as an Authorization header scoped to the server, through GIT_CONFIG_* only', async () => {
    const remote = parseRepositoryUrl('https://git.example.net/r.git');
    const auth = await withGitAuth(remote, { kind: 'basic', username: 'alice', password: 'pa55' }, async (a) => a);
    const basic = Buffer.from('alice:pa55').toString('base64');
    assert.equal(auth.env['GIT_CONFIG_KEY_1'], 'http.https://git.example.net/.extraHeader');
    assert.equal(auth.env['GIT_CONFIG_VALUE_1'], `Authorization: Basic ${basic}`);
    assert.equal(auth.env['GIT_CONFIG_KEY_0'], 'credential.helper');
    assert.ok(auth.secrets.includes('pa55') && auth.secrets.includes(basic));
  });

  it('uses x-access-token as the user name of a token unless one is given', async () => {
    const remote = parseRepositoryUrl('https://git.example.net/r.git');
    const auth = await withGitAuth(remote, { kind: 'token', token: 'tkn' }, async (a) => a);
    assert.equal(auth.env['GIT_CONFIG_VALUE_1'], `Authorization: Basic ${Buffer.from('x-access-token:tkn').toString('base64')}`);
    const named = await withGitAuth(remote, { kind: 'token', token: 'tkn', username: 'bot' }, async (a) => a);
    assert.equal(named.env['GIT_CONFIG_VALUE_1'], `Authorization: Basic ${Buffer.from('bot:tkn').toString('base64')}`);
  });

  it('refuses credentials that do not suit the remote', async () => {
    const cases: [string, GitCredentials][] = [
      ['http://git.example.net/r.git', { kind: 'basic', username: 'a', password: 'b' }],
      ['https://git.example.net/r.git', { kind: 'ssh', privateKey: FAKE_KEY }],
      ['git@git.example.net:r.git', { kind: 'token', token: 't' }],
      ['file:///srv/r.git', { kind: 'token', token: 't' }],
      ['https://git.example.net/r.git', { kind: 'token', token: 'line\r\nX-Injected: 1' }],
      ['https://git.example.net/r.git', { kind: 'basic', username: 'a:b', password: 'c' }],
      ['ssh://git@git.example.net/r.git', { kind: 'ssh', privateKey: 'not a key' }],
    ];
    for (const [url, credentials] of cases) {
      await assert.rejects(
        withGitAuth(parseRepositoryUrl(url), credentials, async () => undefined),
        ValidationError,
        url,
      );
    }
    // Loopback http is the test servers: allowed.
    await withGitAuth(parseRepositoryUrl('http://127.0.0.1:8080/r.git'), { kind: 'basic', username: 'a', password: 'b' }, async () => undefined);
  });

  it('writes an ssh key to a private 0600 file for one invocation and removes it afterwards', async () => {
    const remote = parseRepositoryUrl('ssh://git@git.example.net/r.git');
    let keyDir = '';
    await withGitAuth(remote, { kind: 'ssh', privateKey: FAKE_KEY, knownHosts: 'git.example.net ssh-ed25519 AAAA' }, async (auth) => {
      const command = auth.env['GIT_SSH_COMMAND'] ?? '';
      const keyFile = /-i '([^']+)'/.exec(command)?.[1] ?? '';
      const knownHosts = /UserKnownHostsFile='([^']+)'/.exec(command)?.[1] ?? '';
      keyDir = dirname(keyFile);
      assert.match(command, /-o IdentitiesOnly=yes/);
      assert.match(command, /-o StrictHostKeyChecking=yes/);
      assert.match(command, /-F \/dev\/null/);
      assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
      assert.equal((await stat(keyDir)).mode & 0o777, 0o700);
      assert.equal(await readFile(keyFile, 'utf8'), `${FAKE_KEY}\n`);
      assert.equal(await readFile(knownHosts, 'utf8'), 'git.example.net ssh-ed25519 AAAA\n');
      assert.ok(auth.secrets.includes(FAKE_KEY));
    });
    await assert.rejects(access(keyDir));

    // Also when the invocation fails.
    await assert.rejects(
      withGitAuth(remote, { kind: 'ssh', privateKey: FAKE_KEY }, async (auth) => {
        keyDir = dirname(/-i '([^']+)'/.exec(auth.env['GIT_SSH_COMMAND'] ?? '')?.[1] ?? '');
        throw new Error('boom');
      }),
      /boom/,
    );
    await assert.rejects(access(keyDir));
  });

  it('hands ssh a command line it accepts: an unreachable ssh remote is UnavailableError without key material', async () => {
    const remote = parseRepositoryUrl(`ssh://git@127.0.0.1:${await closedPort()}/r.git`);
    await assert.rejects(
      withGitAuth(remote, { kind: 'ssh', privateKey: FAKE_KEY }, (auth) =>
        runGit(['ls-remote', '--', remote.url], { cwd: tmpdir(), env: auth.env, secrets: auth.secrets, timeoutMs: 10_000 }),
      ),
      (error: unknown) => {
        assert.ok(error instanceof UnavailableError, String(error));
        assert.match(error.message, /Connection refused|Could not read from remote/);
        assert.ok(!error.message.includes('b3BlbnNzaC1rZXktdjEAAAAA'));
        return true;
      },
    );
  });
});
