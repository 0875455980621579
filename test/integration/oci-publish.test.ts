/**
 * `publishPlatform` against a real registry: Debian's `docker-registry`
 * (distribution 2.8) on a free loopback port, checked with an independent
 * client, `skopeo`. One registry runs anonymously; a second one uses the token
 * flow with a token service written here (it checks Basic credentials and
 * issues ES256 JWTs the registry verifies against a throwaway certificate).
 *
 * Everything stops by itself: the registry is watched through a pipe the test
 * process holds (like test/support/git-server.ts does for git daemon), and the
 * token service does not keep the process alive.
 */
// @peculiar/x509 needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, webcrypto } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import * as x509 from '@peculiar/x509';
import { AuthenticationError } from '../../src/errors.js';
import { runGit } from '../../src/git/git-process.js';
import { runCli } from '../support/cli.js';
import { startRegistry, type Registry } from '../support/oci-registry.js';
import { publishPlatform } from '../../src/oci/publish-platform.js';

const FLUX_CONFIG = 'application/vnd.cncf.flux.config.v1+json';
const FLUX_CONTENT = 'application/vnd.cncf.flux.content.v1.tar+gzip';
const COMMIT_DATE = '2025-01-02T03:04:05Z';
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Platform Team',
  GIT_AUTHOR_EMAIL: 'platform@example.invalid',
  GIT_COMMITTER_NAME: 'Platform Team',
  GIT_COMMITTER_EMAIL: 'platform@example.invalid',
  GIT_AUTHOR_DATE: COMMIT_DATE,
  GIT_COMMITTER_DATE: COMMIT_DATE,
};
const USER = 'publisher';
const PASSWORD = 'reg-pass-7f3a9c'; // must never show up in an error

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await runGit(args, { cwd, env: IDENTITY })).stdout.trim();
}

// ---------------------------------------------------------------------------
// skopeo, the independent client

async function skopeo(home: string, ...args: string[]): Promise<string> {
  // No proxy (the registry is on loopback), no auth file of the machine, no policy file needed.
  const result = await run('skopeo', ['--insecure-policy', ...args], { env: { HOME: home, XDG_RUNTIME_DIR: home, NO_PROXY: '*', no_proxy: '*' } });
  assert.equal(result.code, 0, `skopeo ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

async function walk(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath ?? entry.path, entry.name);
    out.set(relative(dir, full), await readFile(full));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The platform repository

/** What HEAD holds. */
const COMMITTED = new Map<string, Buffer>([
  ['base/apps/kustomization.yaml', Buffer.from('namespace: tcr\nresources:\n  - web\n')],
  ['base/apps/web/deployment.yaml', Buffer.from('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n')],
  ['clusters/development/flux/cluster-config.yaml', Buffer.from('apiVersion: v1\nkind: ConfigMap\ndata:\n  cluster_domain: dev.example.net\n')],
  ['clusters/development/kustomization.yaml', Buffer.from('resources:\n  - flux\n')],
  ['scripts/check.sh', Buffer.from('#!/bin/sh\nexit 0\n')],
  ['assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80])],
  ['README.md', Buffer.from('# platform\n')],
]);

async function createPlatformRepository(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await git(dir, 'init', '-q', '-b', 'main');
  for (const [path, content] of COMMITTED) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await chmod(join(dir, 'scripts/check.sh'), 0o755);
  await git(dir, 'add', '.');
  await git(dir, 'commit', '-q', '-m', 'platform');
  await git(dir, 'remote', 'add', 'origin', `https://scaffolder:${PASSWORD}@git.example.net/platform/gitops.git`);
  // Not part of HEAD: an untracked file, an uncommitted edit and a staged new file.
  await writeFile(join(dir, 'untracked.yaml'), 'stray: true\n');
  await writeFile(join(dir, 'base/apps/kustomization.yaml'), 'edited: but not committed\n');
  await writeFile(join(dir, 'staged.yaml'), 'staged: only\n');
  await git(dir, 'add', 'staged.yaml');
  return git(dir, 'rev-parse', 'HEAD');
}

// ---------------------------------------------------------------------------

describe('publishPlatform to a real registry (anonymous)', { timeout: 180_000 }, () => {
  let root: string;
  let home: string;
  let repo: string;
  let commit: string;
  let registry: Registry;
  let reference: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'oci-publish-'));
    home = join(root, 'home');
    await mkdir(home);
    registry = await startRegistry(join(root, 'registry'));
    reference = `oci://${registry.host}/platform`;
    repo = join(root, 'repo');
    commit = await createPlatformRepository(repo);
  });
  after(async () => {
    await registry?.stop();
    await rm(root, { recursive: true, force: true });
  });

  let digest: string;

  it('pushes the HEAD commit tagged with its SHA and latest', async () => {
    const result = await publishPlatform({ repoDir: repo, reference });
    digest = result.digest;
    assert.match(result.digest, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(result.tags, [commit, 'latest']);
    assert.equal(result.repository, `${registry.host}/platform`);
    assert.equal(result.revision, `main@sha1:${commit}`);
    assert.equal(result.source, 'https://git.example.net/platform/gitops.git', 'credentials stripped from the origin URL');
    assert.equal(result.files, COMMITTED.size);
    assert.ok(result.size > 0);

    const listed = JSON.parse(await skopeo(home, 'list-tags', '--tls-verify=false', `docker://${registry.host}/platform`)) as { Tags: string[] };
    assert.deepEqual([...listed.Tags].sort(), [commit, 'latest'].sort());
  });

  it('is what `generate-gitops-env publish` does: digest on stdout, credentials only from the environment', async () => {
    const cli = await runCli(['publish', '--repo', repo, '--to', `oci://${registry.host}/platform-cli`]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.stdout.trim(), digest, 'the same commit gives the same artifact, whoever pushes it');
    assert.match(cli.stderr, new RegExp(`pushed ${registry.host}/platform-cli as ${commit}, latest`));
    const listed = JSON.parse(await skopeo(home, 'list-tags', '--tls-verify=false', `docker://${registry.host}/platform-cli`)) as { Tags: string[] };
    assert.deepEqual([...listed.Tags].sort(), [commit, 'latest'].sort());
    const half = await runCli(['publish', '--repo', repo, '--to', `oci://${registry.host}/platform-cli`], { env: { OCI_USERNAME: 'scaffolder' } });
    assert.equal(half.code, 2);
    assert.match(half.stderr, /OCI_USERNAME\/OCI_PASSWORD: set both or neither/);
  });

  it('stores the manifest in the format Flux pushes and reads', async () => {
    const raw = await skopeo(home, 'inspect', '--raw', '--tls-verify=false', `docker://${registry.host}/platform:latest`);
    assert.equal(sha256(Buffer.from(raw, 'utf8')), digest, 'the registry serves the exact bytes pushed');
    assert.equal(await skopeo(home, 'inspect', '--raw', '--tls-verify=false', `docker://${registry.host}/platform:${commit}`), raw);
    const manifest = JSON.parse(raw) as {
      schemaVersion: number;
      mediaType: string;
      config: { mediaType: string; digest: string; size: number };
      layers: { mediaType: string; digest: string; size: number }[];
      annotations: Record<string, string>;
    };
    assert.equal(manifest.schemaVersion, 2);
    assert.equal(manifest.mediaType, 'application/vnd.oci.image.manifest.v1+json');
    assert.equal(manifest.config.mediaType, FLUX_CONFIG);
    assert.equal(manifest.config.digest, sha256(Buffer.from('{}')));
    assert.equal(manifest.layers.length, 1);
    assert.equal(manifest.layers[0]?.mediaType, FLUX_CONTENT);
    assert.deepEqual(manifest.annotations, {
      'org.opencontainers.image.created': COMMIT_DATE,
      'org.opencontainers.image.revision': `main@sha1:${commit}`,
      'org.opencontainers.image.source': 'https://git.example.net/platform/gitops.git',
    });
    assert.ok(!raw.includes(PASSWORD));
  });

  it('holds exactly the committed files in its layer', async () => {
    const copy = join(root, 'copy');
    await skopeo(home, 'copy', '--src-tls-verify=false', `docker://${registry.host}/platform:${commit}`, `dir:${copy}`);
    const manifest = JSON.parse(await readFile(join(copy, 'manifest.json'), 'utf8')) as { layers: { digest: string }[] };
    const layerFile = join(copy, (manifest.layers[0]?.digest ?? '').replace(/^sha256:/, ''));
    assert.equal(sha256(await readFile(layerFile)), manifest.layers[0]?.digest);

    const out = join(root, 'extracted');
    await mkdir(out);
    const untar = await run('tar', ['-xzf', layerFile, '-C', out]);
    assert.equal(untar.code, 0, untar.stderr);
    const extracted = await walk(out);
    const tracked = (await git(repo, 'ls-tree', '-r', '--name-only', 'HEAD')).split('\n').sort();
    assert.deepEqual([...extracted.keys()].sort(), tracked);
    assert.deepEqual([...extracted.keys()].sort(), [...COMMITTED.keys()].sort());
    for (const [path, content] of COMMITTED) assert.ok(extracted.get(path)?.equals(content), `${path} has the committed bytes`);
    assert.equal((await stat(join(out, 'scripts/check.sh'))).mode & 0o111, 0o111, 'the executable bit survives');

    const listing = await run('tar', ['--numeric-owner', '-tvzf', layerFile]);
    for (const line of listing.stdout.trim().split('\n')) assert.match(line, /^[-d]rw[-x]r-[-x]r-[-x] 0\/0 /, line);
  });

  it('gives the same digest when the same commit is published again, from any checkout', async () => {
    const again = await publishPlatform({ repoDir: repo, reference });
    assert.equal(again.digest, digest);
    const bare = join(root, 'bare.git');
    await git(root, 'clone', '-q', '--bare', repo, bare);
    const fromBare = await publishPlatform({ repoDir: bare, reference, source: 'https://git.example.net/platform/gitops.git' });
    assert.equal(fromBare.digest, digest);
  });

  it('publishes a detached HEAD as sha1:<commit> under the tags asked for', async () => {
    await git(repo, 'checkout', '-q', '--detach');
    const result = await publishPlatform({ repoDir: repo, reference, tags: ['release-1'] });
    assert.equal(result.revision, `sha1:${commit}`);
    assert.deepEqual(result.tags, ['release-1']);
    const manifest = JSON.parse(await skopeo(home, 'inspect', '--raw', '--tls-verify=false', `docker://${registry.host}/platform:release-1`)) as {
      annotations: Record<string, string>;
    };
    assert.equal(manifest.annotations['org.opencontainers.image.revision'], `sha1:${commit}`);
    const listed = JSON.parse(await skopeo(home, 'list-tags', '--tls-verify=false', `docker://${registry.host}/platform`)) as { Tags: string[] };
    assert.deepEqual([...listed.Tags].sort(), [commit, 'latest', 'release-1'].sort());
  });
});

// ---------------------------------------------------------------------------
// Token authentication

function base64url(bytes: Uint8Array | string): string {
  return Buffer.from(bytes).toString('base64url');
}

interface TokenService {
  readonly realm: string;
  readonly rootCertBundle: string;
  /** Every token request's Authorization header (undefined: anonymous). */
  readonly requests: (string | undefined)[];
  stop(): Promise<void>;
}

const ISSUER = 'oci-publish-test-issuer';
const SERVICE = 'oci-publish-test-registry';

/**
 * A token service per https://distribution.github.io/distribution/spec/auth/token/:
 * GET /token?service&scope with Basic credentials; answers an ES256 JWT whose
 * `x5c` header carries a self-signed certificate the registry trusts.
 */
async function startTokenService(dir: string): Promise<TokenService> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=oci-publish-test-token-signer',
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + 86_400_000),
    keys,
    signingAlgorithm: algorithm,
  });
  const rootCertBundle = join(dir, 'token-signer.pem');
  await mkdir(dir, { recursive: true });
  await writeFile(rootCertBundle, `${certificate.toString('pem')}\n`);
  const x5c = Buffer.from(certificate.rawData).toString('base64');
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const requests: (string | undefined)[] = [];
  let issued = 0;

  const server: Server = createServer((req, res) => {
    void (async () => {
      req.resume();
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      requests.push(req.headers.authorization);
      if (url.pathname !== '/token' || req.headers.authorization !== expected) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"bad credentials"}');
        return;
      }
      const access = url.searchParams
        .getAll('scope')
        .map((scope) => /^(repository):(.+):([a-z*,]+)$/.exec(scope))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => ({ type: m[1], name: m[2], actions: (m[3] as string).split(',') }));
      const seconds = Math.floor(Date.now() / 1000);
      const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ES256', x5c: [x5c] }));
      const claims = base64url(
        JSON.stringify({
          iss: ISSUER,
          sub: USER,
          aud: url.searchParams.get('service'),
          exp: seconds + 300,
          nbf: seconds - 10,
          iat: seconds,
          jti: `jti-${++issued}`,
          access,
        }),
      );
      // WebCrypto ECDSA signatures are r||s, the JWS form.
      const signature = await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, Buffer.from(`${header}.${claims}`));
      const token = `${header}.${claims}.${base64url(new Uint8Array(signature))}`;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    rootCertBundle,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('publishPlatform to a real registry with token authentication', { timeout: 180_000 }, () => {
  let root: string;
  let home: string;
  let repo: string;
  let commit: string;
  let tokens: TokenService;
  let registry: Registry;
  let reference: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'oci-publish-auth-'));
    home = join(root, 'home');
    await mkdir(home);
    tokens = await startTokenService(join(root, 'tokens'));
    registry = await startRegistry(join(root, 'registry'), {
      token: { realm: tokens.realm, service: SERVICE, issuer: ISSUER, rootcertbundle: tokens.rootCertBundle },
    });
    reference = `oci://${registry.host}/team/platform`;
    repo = join(root, 'repo');
    commit = await createPlatformRepository(repo);
  });
  after(async () => {
    await registry?.stop();
    await tokens?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses anonymous access and wrong credentials without echoing them', async () => {
    await assert.rejects(
      publishPlatform({ repoDir: repo, reference }),
      (error: unknown) => error instanceof AuthenticationError && /anonymous/.test((error as Error).message),
    );
    const wrong = `${PASSWORD}-wrong`;
    await assert.rejects(publishPlatform({ repoDir: repo, reference, credentials: { username: USER, password: wrong } }), (error: unknown) => {
      assert.ok(error instanceof AuthenticationError, String(error));
      const text = `${(error as Error).message} ${JSON.stringify(error)}`;
      assert.ok(!text.includes(wrong) && !text.includes(Buffer.from(`${USER}:${wrong}`).toString('base64')), text);
      return true;
    });
  });

  it('pushes with a token obtained with the credentials', async () => {
    const before = tokens.requests.length;
    const result = await publishPlatform({ repoDir: repo, reference, credentials: { username: USER, password: PASSWORD } });
    assert.deepEqual(result.tags, [commit, 'latest']);
    assert.equal(tokens.requests.length - before, 1, 'one token for the whole push');

    const creds = `${USER}:${PASSWORD}`;
    const listed = JSON.parse(await skopeo(home, 'list-tags', '--tls-verify=false', '--creds', creds, `docker://${registry.host}/team/platform`)) as {
      Tags: string[];
    };
    assert.deepEqual([...listed.Tags].sort(), [commit, 'latest'].sort());
    const raw = await skopeo(home, 'inspect', '--raw', '--tls-verify=false', '--creds', creds, `docker://${registry.host}/team/platform:latest`);
    assert.equal(sha256(Buffer.from(raw, 'utf8')), result.digest);
    assert.equal((JSON.parse(raw) as { layers: { mediaType: string }[] }).layers[0]?.mediaType, FLUX_CONTENT);
  });
});
