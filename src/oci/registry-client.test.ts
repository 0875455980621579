import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { AuthenticationError, ForbiddenError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { assertOciTag, parseOciReference } from './oci-reference.js';
import { RegistryClient } from './registry-client.js';

const USER = 'robot';
const PASSWORD = 'hunter2-not-in-messages';

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
}

interface RegistryDouble {
  readonly registry: string;
  readonly requests: Recorded[];
  readonly blobs: Map<string, Buffer>;
  readonly manifests: Map<string, { readonly body: Buffer; readonly contentType: string }>;
  /** Forgets every issued token, as if they had expired. */
  revokeTokens(): void;
  /** The next manifest PUT answers with this status and body. */
  failNextManifest(status: number, body: string): void;
  stop(): Promise<void>;
}

/**
 * A protocol-faithful double of the distribution API subset the client uses,
 * with the three authentication modes a registry can ask for.
 */
async function startRegistryDouble(auth: 'none' | 'basic' | 'bearer', options: { anonymousTokens?: boolean; grant?: string } = {}): Promise<RegistryDouble> {
  const requests: Recorded[] = [];
  const blobs = new Map<string, Buffer>();
  const manifests = new Map<string, { body: Buffer; contentType: string }>();
  const tokens = new Set<string>();
  let issued = 0;
  let manifestFailure: { status: number; body: string } | undefined;
  const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  let origin = '';

  const body = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => resolve(Buffer.concat(chunks)));
    });
  const error = (res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ errors: [{ code, message: code.toLowerCase().replace(/_/g, ' ') }] }));
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      requests.push({ method: req.method ?? '', path: url.pathname + url.search, authorization: req.headers.authorization });
      const payload = await body(req);

      if (url.pathname === '/token') {
        if (auth !== 'bearer') return error(res, 404, 'NOT_FOUND');
        const given = req.headers.authorization;
        if (given === undefined ? !options.anonymousTokens : given !== basic) return error(res, 401, 'UNAUTHORIZED');
        const token = `tok-${++issued}`;
        tokens.add(token);
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ token, expires_in: 300 }));
      }

      const match = /^\/v2\/(.+?)\/(blobs\/uploads\/|blobs\/|manifests\/)(.*)$/.exec(url.pathname);
      const name = match?.[1] ?? '';
      const write = req.method !== 'GET' && req.method !== 'HEAD';
      if (auth === 'basic' && req.headers.authorization !== basic) {
        return error(res, 401, 'UNAUTHORIZED', { 'www-authenticate': 'Basic realm="double"' });
      }
      if (auth === 'bearer') {
        const presented = req.headers.authorization?.replace(/^Bearer /, '');
        if (presented === undefined || !tokens.has(presented)) {
          const scope = `repository:${name}:${write ? 'pull,push' : 'pull'}`;
          return error(res, 401, 'UNAUTHORIZED', { 'www-authenticate': `Bearer realm="${origin}/token",service="double",scope="${scope}"` });
        }
        if (options.grant === 'pull' && write) {
          return error(res, 401, 'DENIED', {
            'www-authenticate': `Bearer realm="${origin}/token",service="double",scope="repository:${name}:pull,push",error="insufficient_scope"`,
          });
        }
      }
      if (!match) return error(res, 404, 'NOT_FOUND');
      const [, , kind, rest] = match as unknown as [string, string, string, string];

      if (kind === 'blobs/' && req.method === 'HEAD') {
        const blob = blobs.get(rest);
        res.writeHead(blob ? 200 : 404, blob ? { 'content-length': String(blob.length), 'docker-content-digest': rest } : {});
        return res.end();
      }
      if (kind === 'blobs/uploads/' && req.method === 'POST' && rest === '') {
        res.writeHead(202, { location: `/v2/${name}/blobs/uploads/u-${requests.length}?_state=opaque%3D%3D`, 'content-length': '0' });
        return res.end();
      }
      if (kind === 'blobs/uploads/' && req.method === 'PUT') {
        const digest = url.searchParams.get('digest') ?? '';
        if (url.searchParams.get('_state') !== 'opaque==') return error(res, 400, 'BLOB_UPLOAD_INVALID');
        if (sha256(payload) !== digest) return error(res, 400, 'DIGEST_INVALID');
        blobs.set(digest, payload);
        res.writeHead(201, { 'docker-content-digest': digest, location: `/v2/${name}/blobs/${digest}` });
        return res.end();
      }
      if (kind === 'manifests/' && req.method === 'PUT') {
        if (manifestFailure) {
          const failure = manifestFailure;
          manifestFailure = undefined;
          res.writeHead(failure.status, { 'content-type': 'application/json' });
          return res.end(failure.body);
        }
        manifests.set(rest, { body: payload, contentType: req.headers['content-type'] ?? '' });
        res.writeHead(201, { 'docker-content-digest': sha256(payload) });
        return res.end();
      }
      return error(res, 404, 'NOT_FOUND');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  server.unref();
  return {
    registry: `127.0.0.1:${port}`,
    requests,
    blobs,
    manifests,
    revokeTokens: () => tokens.clear(),
    failNextManifest: (status, text) => (manifestFailure = { status, body: text }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function assertNoSecret(error: unknown): true {
  const text = `${(error as Error).message} ${JSON.stringify(error)}`;
  assert.ok(!text.includes(PASSWORD), text);
  assert.ok(!text.includes(Buffer.from(`${USER}:${PASSWORD}`).toString('base64')), text);
  assert.ok(!/tok-\d/.test(text), text);
  return true;
}

describe('parseOciReference', () => {
  it('parses oci:// references and plain host/path ones', () => {
    assert.deepEqual(parseOciReference('oci://127.0.0.1:5000/platform'), { registry: '127.0.0.1:5000', repository: 'platform' });
    assert.deepEqual(parseOciReference('oci://ghcr.io/org/config/platform:v1.2.3'), { registry: 'ghcr.io', repository: 'org/config/platform', tag: 'v1.2.3' });
    assert.deepEqual(parseOciReference('Registry.Example.NET:8443/a/b_c__d-e.f:latest'), {
      registry: 'registry.example.net:8443',
      repository: 'a/b_c__d-e.f',
      tag: 'latest',
    });
    assert.deepEqual(parseOciReference('localhost/platform'), { registry: 'localhost', repository: 'platform' });
    assert.deepEqual(parseOciReference('[::1]:5000/platform:x'), { registry: '[::1]:5000', repository: 'platform', tag: 'x' });
    const digest = `sha256:${'a'.repeat(64)}`;
    assert.deepEqual(parseOciReference(`oci://ghcr.io/org/platform:v1@${digest}`), { registry: 'ghcr.io', repository: 'org/platform', tag: 'v1', digest });
  });

  it('refuses what is not a registry reference', () => {
    for (const bad of [
      'platform',
      'oci://platform',
      'org/platform', // no registry host: no implied Docker Hub
      'https://ghcr.io/org/platform',
      'oci://ghcr.io/',
      'oci://ghcr.io/Org/Platform',
      'oci://ghcr.io/org//platform',
      'oci://ghcr.io/org/platform:',
      'oci://ghcr.io/org/platform:-tag',
      `oci://ghcr.io/org/platform:${'t'.repeat(129)}`,
      'oci://ghcr.io/org/platform@sha256:short',
      'oci://ghcr.io:99999/org/platform',
      'oci://gh cr.io/org/platform',
    ]) {
      assert.throws(() => parseOciReference(bad), ValidationError, bad);
    }
  });

  it('refuses a registry and repository longer than the 255 characters registries accept together', () => {
    // ghcr.io (7) + '/' + 247 = 255
    const longest = `oci://ghcr.io/org/${'a'.repeat(243)}`;
    assert.equal(parseOciReference(longest).repository.length, 247);
    assert.throws(() => parseOciReference(`${longest}b`), ValidationError);
  });

  it('refuses credentials in the reference without echoing them', () => {
    assert.throws(
      () => parseOciReference(`oci://${USER}:${PASSWORD}@ghcr.io/org/platform`),
      (error: unknown) => error instanceof ValidationError && assertNoSecret(error),
    );
    assert.throws(
      () => parseOciReference(`${USER}:${PASSWORD}@ghcr.io`),
      (error: unknown) => error instanceof ValidationError && assertNoSecret(error),
    );
  });
});

describe('assertOciTag', () => {
  it('accepts OCI tags and refuses the rest', () => {
    for (const tag of ['latest', 'v1.2.3', '0123456789abcdef0123456789abcdef01234567', '_x', 'a-b.c_d']) assert.equal(assertOciTag(tag), tag);
    for (const tag of ['', '.x', '-x', 'a/b', 'a:b', 't'.repeat(129)]) assert.throws(() => assertOciTag(tag), ValidationError, tag);
  });
});

describe('RegistryClient transport', () => {
  /** A fetch that records what would be sent and answers 404. */
  function recordingFetch(calls: string[]): typeof fetch {
    return (async (input: string | URL | Request) => {
      calls.push(String(input));
      return new Response(null, { status: 404 });
    }) as typeof fetch;
  }

  it('speaks https to a remote registry and http only to loopback or when insecure', async () => {
    const cases: [string, boolean | undefined, string][] = [
      ['registry.example.net/platform', undefined, 'https://registry.example.net/v2/platform/blobs/'],
      ['registry.example.net:5000/platform', true, 'http://registry.example.net:5000/v2/platform/blobs/'],
      ['127.0.0.1:5000/platform', undefined, 'http://127.0.0.1:5000/v2/platform/blobs/'],
      ['127.8.9.10:5000/platform', undefined, 'http://127.8.9.10:5000/v2/platform/blobs/'],
      ['localhost:5000/platform', undefined, 'http://localhost:5000/v2/platform/blobs/'],
      ['[::1]:5000/platform', undefined, 'http://[::1]:5000/v2/platform/blobs/'],
      ['127.0.0.1:5000/platform', false, 'https://127.0.0.1:5000/v2/platform/blobs/'],
    ];
    for (const [reference, insecure, prefix] of cases) {
      const calls: string[] = [];
      const client = new RegistryClient({ reference, ...(insecure !== undefined ? { insecure } : {}), fetch: recordingFetch(calls) });
      assert.equal(await client.blobExists(`sha256:${'0'.repeat(64)}`), false);
      assert.ok(calls[0]?.startsWith(prefix), `${reference}: ${calls[0]}`);
    }
  });

  it('never sends credentials to a plain-http token realm of a remote registry', async () => {
    const calls: { url: string; authorization: string | null }[] = [];
    const fake = (async (input: string | URL | Request, init?: RequestInit) => {
      calls.push({ url: String(input), authorization: new Headers(init?.headers).get('authorization') });
      return new Response(null, { status: 401, headers: { 'www-authenticate': 'Bearer realm="http://auth.example.net/token",service="registry"' } });
    }) as typeof fetch;
    const client = new RegistryClient({ reference: 'registry.example.net/platform', credentials: { username: USER, password: PASSWORD }, fetch: fake });
    await assert.rejects(client.blobExists(`sha256:${'0'.repeat(64)}`), (error: unknown) => error instanceof AuthenticationError && assertNoSecret(error));
    assert.deepEqual(
      calls.map((c) => c.url),
      [`https://registry.example.net/v2/platform/blobs/sha256:${'0'.repeat(64)}`],
    );
    assert.equal(calls[0]?.authorization, null);
  });

  it('keeps the authorization away from an upload location on another origin, and refuses http there', async () => {
    const seen: { method: string; url: string; authorization: string | null }[] = [];
    const fake = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input);
      const authorization = new Headers(init?.headers).get('authorization');
      seen.push({ method: init?.method ?? 'GET', url, authorization });
      if (!authorization && url.startsWith('https://registry.example.net/')) {
        return new Response(null, { status: 401, headers: { 'www-authenticate': 'Basic realm="r"' } });
      }
      if (init?.method === 'HEAD') return new Response(null, { status: 404 });
      if (init?.method === 'POST') return new Response(null, { status: 202, headers: { location: 'https://uploads.example.net/put/1?sig=abc' } });
      return new Response(null, { status: 201 });
    }) as typeof fetch;
    const client = new RegistryClient({ reference: 'registry.example.net/platform', credentials: { username: USER, password: PASSWORD }, fetch: fake });
    const pushed = await client.pushBlob(Buffer.from('{}'));
    assert.equal(pushed.uploaded, true);
    const upload = seen.find((s) => s.method === 'PUT');
    assert.ok(upload?.url.startsWith('https://uploads.example.net/put/1?sig=abc&digest=sha256%3A'), upload?.url);
    assert.equal(upload?.authorization, null);

    const downgrade = (async (input: string | URL | Request, init?: RequestInit) => {
      if (init?.method === 'HEAD') return new Response(null, { status: 404 });
      if (init?.method === 'POST') return new Response(null, { status: 202, headers: { location: 'http://uploads.example.net/put/1' } });
      throw new Error(`unexpected ${String(input)}`);
    }) as typeof fetch;
    const insecureUpload = new RegistryClient({ reference: 'registry.example.net/platform', fetch: downgrade });
    await assert.rejects(insecureUpload.pushBlob(Buffer.from('{}')), UnavailableError);
  });

  it('reports an unreachable registry as unavailable', async () => {
    const closed = await startRegistryDouble('none');
    await closed.stop();
    const client = new RegistryClient({ reference: `${closed.registry}/platform` });
    await assert.rejects(
      client.blobExists(`sha256:${'0'.repeat(64)}`),
      (error: unknown) => error instanceof UnavailableError && /ECONNREFUSED/.test((error as Error).message),
    );
  });

  it('rejects with the signal reason when aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    controller.abort(reason);
    const client = new RegistryClient({ reference: '127.0.0.1:1/platform', signal: controller.signal });
    await assert.rejects(client.blobExists(`sha256:${'0'.repeat(64)}`), (error: unknown) => error === reason);
  });
});

describe('RegistryClient against a distribution API double', () => {
  const blob = Buffer.from('layer bytes');
  const manifest = Buffer.from('{"schemaVersion":2}');
  const mediaType = 'application/vnd.oci.image.manifest.v1+json';
  const doubles: RegistryDouble[] = [];
  const start = async (...args: Parameters<typeof startRegistryDouble>) => {
    const double = await startRegistryDouble(...args);
    doubles.push(double);
    return double;
  };
  after(async () => {
    await Promise.all(doubles.map((d) => d.stop()));
  });

  it('uploads a blob monolithically, then skips it once the registry has it', async () => {
    const double = await start('none');
    const client = new RegistryClient({ reference: `oci://${double.registry}/org/platform` });
    assert.deepEqual(await client.pushBlob(blob), { digest: sha256(blob), size: blob.length, uploaded: true });
    assert.ok(double.blobs.get(sha256(blob))?.equals(blob));
    assert.deepEqual(
      double.requests.map((r) => `${r.method} ${r.path.replace(/u-\d+/, 'u-N')}`),
      [
        `HEAD /v2/org/platform/blobs/${sha256(blob)}`,
        'POST /v2/org/platform/blobs/uploads/',
        `PUT /v2/org/platform/blobs/uploads/u-N?_state=opaque%3D%3D&digest=${encodeURIComponent(sha256(blob))}`,
      ],
    );
    assert.equal(await client.blobExists(sha256(blob)), true);
    assert.deepEqual(await client.pushBlob(blob, sha256(blob)), { digest: sha256(blob), size: blob.length, uploaded: false });
    assert.equal(double.requests.length, 5);
    assert.ok(double.requests.every((r) => r.authorization === undefined));
  });

  it('refuses a digest that does not match the content', async () => {
    const client = new RegistryClient({ reference: '127.0.0.1:1/platform' });
    await assert.rejects(client.pushBlob(blob, `sha256:${'0'.repeat(64)}`), ValidationError);
  });

  it('puts a manifest under a tag with its media type and returns its digest', async () => {
    const double = await start('none');
    const client = new RegistryClient({ reference: `${double.registry}/platform` });
    assert.equal(await client.putManifest('latest', manifest, mediaType), sha256(manifest));
    assert.deepEqual(double.manifests.get('latest'), { body: manifest, contentType: mediaType });
    await assert.rejects(client.putManifest('bad/tag', manifest, mediaType), ValidationError);
  });

  it('follows the token flow with Basic credentials and reuses the token', async () => {
    const double = await start('bearer');
    const client = new RegistryClient({ reference: `${double.registry}/platform`, credentials: { username: USER, password: PASSWORD } });
    await client.pushBlob(blob);
    await client.putManifest('latest', manifest, mediaType);
    await client.putManifest('v1', manifest, mediaType);

    const tokenRequests = double.requests.filter((r) => r.path.startsWith('/token'));
    assert.equal(tokenRequests.length, 1, 'one token for the whole push');
    const query = new URL(tokenRequests[0]?.path ?? '', 'http://x').searchParams;
    assert.equal(query.get('service'), 'double');
    assert.ok(query.getAll('scope').includes('repository:platform:pull,push'), query.toString());
    assert.equal(tokenRequests[0]?.authorization, `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`);
    const registryRequests = double.requests.filter((r) => r.path.startsWith('/v2/'));
    assert.equal(registryRequests[0]?.authorization, undefined, 'anonymous first, to get the challenge');
    assert.ok(registryRequests.slice(1).every((r) => r.authorization === 'Bearer tok-1'));
    assert.ok(double.manifests.has('latest') && double.manifests.has('v1'));
  });

  it('fetches a new token once when the old one stops working', async () => {
    const double = await start('bearer');
    const client = new RegistryClient({ reference: `${double.registry}/platform`, credentials: { username: USER, password: PASSWORD } });
    await client.putManifest('latest', manifest, mediaType);
    double.revokeTokens();
    await client.putManifest('v2', manifest, mediaType);
    assert.equal(double.requests.filter((r) => r.path.startsWith('/token')).length, 2);
    assert.equal(double.requests.at(-1)?.authorization, 'Bearer tok-2');
  });

  it('asks for an anonymous token when there are no credentials', async () => {
    const double = await start('bearer', { anonymousTokens: true });
    const client = new RegistryClient({ reference: `${double.registry}/platform` });
    await client.putManifest('latest', manifest, mediaType);
    const token = double.requests.find((r) => r.path.startsWith('/token'));
    assert.equal(token?.authorization, undefined);
  });

  it('refuses wrong credentials and anonymous access as authentication errors without echoing a secret', async () => {
    const double = await start('bearer');
    const wrong = new RegistryClient({ reference: `${double.registry}/platform`, credentials: { username: USER, password: `${PASSWORD}-wrong` } });
    await assert.rejects(wrong.putManifest('latest', manifest, mediaType), (error: unknown) => {
      assert.ok(error instanceof AuthenticationError, String(error));
      assert.match((error as Error).message, /refused the credentials/);
      return assertNoSecret(error);
    });
    const anonymous = new RegistryClient({ reference: `${double.registry}/platform` });
    await assert.rejects(anonymous.putManifest('latest', manifest, mediaType), AuthenticationError);
    assert.equal(double.manifests.size, 0);
  });

  it('says forbidden when the token does not allow pushing', async () => {
    const double = await start('bearer', { grant: 'pull' });
    const client = new RegistryClient({ reference: `${double.registry}/platform`, credentials: { username: USER, password: PASSWORD } });
    await assert.rejects(client.putManifest('latest', manifest, mediaType), (error: unknown) => error instanceof ForbiddenError && assertNoSecret(error));
  });

  it('answers a Basic challenge with the credentials', async () => {
    const double = await start('basic');
    const client = new RegistryClient({ reference: `${double.registry}/platform`, credentials: { username: USER, password: PASSWORD } });
    await client.pushBlob(blob);
    const withAuth = double.requests.filter((r) => r.authorization !== undefined);
    assert.equal(double.requests.length - withAuth.length, 1, 'only the first request goes without');
    assert.ok(withAuth.every((r) => r.authorization === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`));

    const anonymous = new RegistryClient({ reference: `${double.registry}/platform` });
    await assert.rejects(
      anonymous.blobExists(sha256(blob)),
      (error: unknown) => error instanceof AuthenticationError && /requires credentials/.test((error as Error).message),
    );
    const wrong = new RegistryClient({ reference: `${double.registry}/platform`, credentials: { username: USER, password: 'nope-nope' } });
    await assert.rejects(wrong.blobExists(sha256(blob)), (error: unknown) => error instanceof AuthenticationError && assertNoSecret(error));
  });

  it('maps registry errors: 4xx with its error codes to ValidationError, 404 to NotFoundError, 5xx to UnavailableError', async () => {
    const double = await start('none');
    const client = new RegistryClient({ reference: `${double.registry}/platform` });
    double.failNextManifest(400, JSON.stringify({ errors: [{ code: 'MANIFEST_INVALID', message: 'manifest invalid' }] }));
    await assert.rejects(client.putManifest('latest', manifest, mediaType), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.match((error as Error).message, /PUT \/v2\/platform\/manifests\/latest returned 400 \(MANIFEST_INVALID: manifest invalid\)/);
      return true;
    });
    double.failNextManifest(404, JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry' }] }));
    await assert.rejects(client.putManifest('latest', manifest, mediaType), NotFoundError);
    double.failNextManifest(503, '<html>down</html>');
    await assert.rejects(
      client.putManifest('latest', manifest, mediaType),
      (error: unknown) => error instanceof UnavailableError && !(error as Error).message.includes('html'),
    );
  });
});

describe('RegistryClient against a misbehaving registry', () => {
  const digestOf = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

  it('keeps the password and the token out of an error the registry echoes them in', async () => {
    const fake = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input);
      const authorization = new Headers(init?.headers).get('authorization');
      if (url.startsWith('https://auth.example.net/')) return Response.json({ token: 'tok-1' });
      if (authorization !== 'Bearer tok-1') {
        return new Response(null, { status: 401, headers: { 'www-authenticate': 'Bearer realm="https://auth.example.net/token",service="registry"' } });
      }
      const body = { errors: [{ code: 'MANIFEST_INVALID', message: `bad request from ${USER}:${PASSWORD} with tok-1` }] };
      return Response.json(body, { status: 400 });
    }) as typeof fetch;
    const client = new RegistryClient({ reference: 'registry.example.net/platform', credentials: { username: USER, password: PASSWORD }, fetch: fake });
    await assert.rejects(client.putManifest('latest', Buffer.from('{}'), 'application/vnd.oci.image.manifest.v1+json'), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.match((error as Error).message, /MANIFEST_INVALID/);
      return assertNoSecret(error);
    });
  });

  it('keeps the password out of a transport failure that quotes it', async () => {
    const fake = (async () => {
      throw new TypeError('fetch failed', { cause: new Error(`proxy refused ${USER}:${PASSWORD}`) });
    }) as typeof fetch;
    const client = new RegistryClient({ reference: 'registry.example.net/platform', credentials: { username: USER, password: PASSWORD }, fetch: fake });
    await assert.rejects(client.blobExists(digestOf('{}')), (error: unknown) => error instanceof UnavailableError && assertNoSecret(error));
  });

  it('fails when the registry says it stored a blob or a manifest under another digest', async () => {
    const other = digestOf('something else');
    const fake = (async (_input: string | URL | Request, init?: RequestInit) => {
      if (init?.method === 'HEAD') return new Response(null, { status: 404 });
      if (init?.method === 'POST') return new Response(null, { status: 202, headers: { location: '/v2/platform/blobs/uploads/1' } });
      return new Response(null, { status: 201, headers: { 'docker-content-digest': other } });
    }) as typeof fetch;
    const client = new RegistryClient({ reference: 'registry.example.net/platform', fetch: fake });
    await assert.rejects(
      client.pushBlob(Buffer.from('{}')),
      (error: unknown) => error instanceof UnavailableError && (error as Error).message.includes(`as ${other}`),
    );
    await assert.rejects(
      client.putManifest('latest', Buffer.from('{}'), 'application/vnd.oci.image.manifest.v1+json'),
      (error: unknown) => error instanceof UnavailableError && (error as Error).message.includes(`as ${other}`),
    );
  });

  it('refuses a blob digest that is not sha256:<hex> before sending anything', async () => {
    const urls: string[] = [];
    const fake = (async (input: string | URL | Request) => {
      urls.push(String(input));
      return new Response(null, { status: 200 });
    }) as typeof fetch;
    const client = new RegistryClient({ reference: 'registry.example.net/platform', fetch: fake });
    await assert.rejects(client.blobExists('sha256:../../manifests/latest'), ValidationError);
    await assert.rejects(client.blobExists(`sha256:${'A'.repeat(64)}`), ValidationError);
    assert.deepEqual(urls, []);
  });

  it('sends no blob to a plain-http upload location of a remote registry', async () => {
    const seen: string[] = [];
    const fake = (async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(`${init?.method ?? 'GET'} ${String(input)}`);
      if (init?.method === 'HEAD') return new Response(null, { status: 404 });
      if (init?.method === 'POST') return new Response(null, { status: 202, headers: { location: 'http://uploads.example.net/put/1' } });
      return new Response(null, { status: 201 });
    }) as typeof fetch;
    const client = new RegistryClient({ reference: 'registry.example.net/platform', fetch: fake });
    await assert.rejects(
      client.pushBlob(Buffer.from('{}')),
      (error: unknown) =>
        error instanceof UnavailableError && /refusing the upload location http:\/\/uploads\.example\.net\/put\/1 \(not https\)/.test((error as Error).message),
    );
    assert.ok(!seen.some((s) => s.startsWith('PUT ')), seen.join('\n'));
  });
});
