/**
 * Credentials never follow a redirect to another origin: the forge double on
 * loopback answers 307 to a second loopback server (another port, so another
 * origin), driven through the real clients (Octokit with its plugins and the
 * App token exchange, gitbeaker with our requester, the Gitea client) and the
 * OCI registry client, whose blob redirects to a storage host must still work.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ForgeClient } from '../../src/delivery/forge-client.js';
import { GiteaForge } from '../../src/delivery/gitea-forge.js';
import { GitHubForge } from '../../src/delivery/github-forge.js';
import { GitLabForge } from '../../src/delivery/gitlab-forge.js';
import { UnavailableError } from '../../src/errors.js';
import { RegistryClient } from '../../src/oci/registry-client.js';
import { type DoubleForge, type ForgeDouble, startForgeDouble } from '../support/forge-double.js';
import { git } from '../support/git.js';
import { type RecordingReply, type RecordingServer, startRecordingServer } from '../support/recording-server.js';

const TOKEN = 'forge-token-never-elsewhere-0123';
const OWNER = 'acme';
const REPO = 'platform';

let scratch: string;
let bare: string;
let elsewhere: RecordingServer;
const doubles: ForgeDouble[] = [];

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-redirects-'));
  bare = join(scratch, 'platform.git');
  await git(scratch, 'init', '--quiet', '--bare', bare);
  elsewhere = await startRecordingServer();
});

after(async () => {
  await Promise.all(doubles.map((d) => d.stop()));
  await elsewhere.stop();
  await rm(scratch, { recursive: true, force: true });
});

/** Whether any request the other origin received carried `secret` anywhere in its headers or body. */
function sawSecret(server: RecordingServer, secret: string): boolean {
  return server.requests.some((r) => JSON.stringify(r.headers).includes(secret) || r.body.includes(secret));
}

async function doubleFor(forge: DoubleForge, githubApp?: Parameters<typeof startForgeDouble>[0]['githubApp']): Promise<ForgeDouble> {
  const double = await startForgeDouble({ forge, repoDir: bare, owner: OWNER, repo: REPO, token: TOKEN, ...(githubApp ? { githubApp } : {}) });
  doubles.push(double);
  return double;
}

function clientFor(forge: DoubleForge, double: ForgeDouble): ForgeClient {
  if (forge === 'github') return new GitHubForge({ apiUrl: double.apiUrl, owner: OWNER, repo: REPO, auth: { kind: 'token', token: TOKEN } });
  if (forge === 'gitlab') return new GitLabForge({ apiUrl: double.apiUrl, projectPath: `${OWNER}/${REPO}`, token: TOKEN });
  return new GiteaForge({ apiUrl: double.apiUrl, owner: OWNER, repo: REPO, token: TOKEN });
}

for (const forge of ['gitlab', 'github', 'gitea'] as const) {
  describe(`the ${forge} client and redirects`, () => {
    it('refuses a redirect to another origin: the other server never sees the token, nor any request', async () => {
      const double = await doubleFor(forge);
      const client = clientFor(forge, double);
      const seen = elsewhere.requests.length;
      double.redirectNext(elsewhere.baseUrl);
      await assert.rejects(client.findOpen('feature', 'main'), (error: Error) => {
        assert.ok(error instanceof UnavailableError, String(error));
        assert.match(error.message, new RegExp(`was redirected to ${elsewhere.baseUrl}/`));
        assert.ok(!error.message.includes(TOKEN));
        return true;
      });
      assert.equal(elsewhere.requests.length, seen, 'nothing was sent to the other origin');
      assert.ok(!sawSecret(elsewhere, TOKEN));
    });

    it('follows a redirect within its origin with the token', async () => {
      const double = await doubleFor(forge);
      double.redirectNext(double.baseUrl, 1);
      assert.equal(await clientFor(forge, double).findOpen('feature', 'main'), undefined);
      assert.deepEqual(
        double.calls.map((c) => c.status),
        [307, 200],
        'the redirected call reached the forge again, authorized',
      );
    });
  });
}

describe('the GitHub App token exchange and redirects', () => {
  it('sends the App JWT to no other origin', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const double = await doubleFor('github', { appId: '1234', installationId: '5678', publicKey });
    const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const client = new GitHubForge({
      apiUrl: double.apiUrl,
      owner: OWNER,
      repo: REPO,
      auth: { kind: 'app', appId: '1234', installationId: '5678', privateKey: pem },
    });
    const seen = elsewhere.requests.length;
    double.redirectNext(elsewhere.baseUrl);
    await assert.rejects(client.gitToken(), /was redirected to/);
    assert.equal(elsewhere.requests.length, seen);
    assert.ok(!elsewhere.requests.some((r) => /^bearer /i.test(String(r.headers.authorization ?? ''))));
  });
});

describe('the OCI registry client and redirects', () => {
  const USER = 'robot';
  const PASSWORD = 'registry-password-never-elsewhere';
  const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const content = Buffer.from('layer bytes');
  const digest = `sha256:${createHash('sha256').update(content).digest('hex')}`;
  let storage: RecordingServer;
  let registry: { host: string; stop(): Promise<void>; authorized: number; blobPresent: boolean };

  before(async () => {
    // The storage host answers a presigned HEAD and PUT the way S3 would; it knows nothing of the registry's credentials.
    storage = await startRecordingServer((request): RecordingReply =>
      request.method === 'HEAD'
        ? { status: 200, headers: { 'content-length': String(content.length) } }
        : { status: 201, headers: { 'docker-content-digest': digest } },
    );
    const read = (req: IncomingMessage) => new Promise<void>((resolve) => req.resume().on('end', () => resolve()));
    const state = { authorized: 0, blobPresent: true };
    const server = createServer((req, res) => {
      void read(req).then(() => {
        if (req.headers.authorization !== BASIC) return res.writeHead(401, { 'www-authenticate': 'Basic realm="double"' }).end();
        state.authorized += 1;
        const url = new URL(req.url ?? '/', 'http://registry');
        if (req.method === 'HEAD' && url.pathname.includes('/blobs/sha256:')) {
          if (!state.blobPresent) return res.writeHead(404).end();
          return res.writeHead(307, { location: `${storage.baseUrl}/blob?X-Amz-Signature=sig` }).end();
        }
        if (req.method === 'POST' && url.pathname.endsWith('/blobs/uploads/')) return res.writeHead(202, { location: '/v2/platform/blobs/uploads/u1' }).end();
        if (req.method === 'PUT' && url.pathname.endsWith('/uploads/u1'))
          return res.writeHead(307, { location: `${storage.baseUrl}/upload${url.search}` }).end();
        return res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.unref();
    registry = Object.assign(state, {
      host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
    });
  });
  after(async () => {
    await storage.stop();
    await registry.stop();
  });

  it('follows a blob redirect to its storage host without the credentials', async () => {
    const client = new RegistryClient({ reference: `${registry.host}/platform`, credentials: { username: USER, password: PASSWORD } });
    assert.equal(await client.blobExists(digest), true);
    assert.ok(registry.authorized > 0, 'the registry itself got the credentials');
    assert.equal(storage.requests.length, 1);
    assert.equal(storage.requests[0]!.headers.authorization, undefined);
    assert.ok(!sawSecret(storage, PASSWORD) && !sawSecret(storage, BASIC.slice('Basic '.length)));
  });

  it('sends an upload redirected to its storage host there again, bytes and all, without the credentials', async () => {
    const client = new RegistryClient({ reference: `${registry.host}/platform`, credentials: { username: USER, password: PASSWORD } });
    const seen = storage.requests.length;
    registry.blobPresent = false;
    assert.deepEqual(await client.pushBlob(content), { digest, size: content.length, uploaded: true });
    const upload = storage.requests.slice(seen).find((r) => r.method === 'PUT');
    assert.ok(upload, 'the PUT reached the storage host');
    assert.equal(upload.body, content.toString());
    assert.equal(upload.headers.authorization, undefined);
    assert.ok(!sawSecret(storage, PASSWORD) && !sawSecret(storage, BASIC.slice('Basic '.length)));
  });
});
