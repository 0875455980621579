import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startKubeApiDouble, type KubeApiDouble } from '../../test/support/kube-api-double.js';
import { AuthenticationError, ForbiddenError, UnavailableError, ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { loadKubeConfig } from './kube-config.js';
import { TokenReviewAuthenticator } from './token-review-authenticator.js';

const CONTROLLER = 'system:serviceaccount:kubeopera-core:host-cluster-controller';

/** A logger that keeps every event, to check that no token is ever logged. */
function recordingLogger(events: string[]): Logger {
  const logger: Logger = {
    debug: (fields, message) => void events.push(JSON.stringify({ fields, message })),
    info: (fields, message) => void events.push(JSON.stringify({ fields, message })),
    warn: (fields, message) => void events.push(JSON.stringify({ fields, message })),
    error: (fields, message) => void events.push(JSON.stringify({ fields, message })),
    child: () => logger,
  };
  return logger;
}

describe('TokenReviewAuthenticator', () => {
  let double: KubeApiDouble;
  let dir: string;
  let kubeconfigPath: string;
  const events: string[] = [];

  const reviews = (): number => double.requests.filter((r) => r.path === '/apis/authentication.k8s.io/v1/tokenreviews').length;
  const authenticator = (options: { audiences?: string[]; allowed?: string[]; cacheTtlMs?: number } = {}): TokenReviewAuthenticator =>
    new TokenReviewAuthenticator({
      kubeConfig: loadKubeConfig({ kind: 'file', path: kubeconfigPath }),
      allowed: options.allowed ?? [CONTROLLER, 'system:serviceaccount:ci:*'],
      ...(options.audiences ? { audiences: options.audiences } : {}),
      ...(options.cacheTtlMs !== undefined ? { cacheTtlMs: options.cacheTtlMs } : {}),
      logger: recordingLogger(events),
    });

  before(async () => {
    double = await startKubeApiDouble();
    dir = await mkdtemp(join(tmpdir(), 'token-review-'));
    kubeconfigPath = await double.writeKubeconfig(dir);
    double.setTokenReview('controller-token', { authenticated: true, user: { username: CONTROLLER, groups: ['system:serviceaccounts'] } });
    double.setTokenReview('ci-token', { authenticated: true, user: { username: 'system:serviceaccount:ci:pipeline' } });
    double.setTokenReview('stranger-token', { authenticated: true, user: { username: 'system:serviceaccount:default:stranger' } });
    double.setTokenReview('scoped-token', { authenticated: true, user: { username: CONTROLLER }, audiences: ['gitops-scaffolder'] });
  });

  after(async () => {
    await double.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('returns the identity of an allowed ServiceAccount', async () => {
    const caller = await authenticator().authenticate('controller-token');
    assert.equal(caller.identity, CONTROLLER);
    // The groups come along: RBAC rules bound to a group must apply to the caller.
    assert.deepEqual(caller.groups, ['system:serviceaccounts']);
    const request = double.requests.findLast((r) => r.path === '/apis/authentication.k8s.io/v1/tokenreviews');
    assert.equal(request?.method, 'POST');
    assert.deepEqual(request?.body, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'controller-token' } });
  });

  it('allows every ServiceAccount of a namespace with NS:*', async () => {
    assert.equal((await authenticator().authenticate('ci-token')).identity, 'system:serviceaccount:ci:pipeline');
  });

  it('throws ForbiddenError for a valid identity that is not allowed', async () => {
    await assert.rejects(
      authenticator().authenticate('stranger-token'),
      (error: unknown) => error instanceof ForbiddenError && /default:stranger/.test(error.message),
    );
  });

  it('throws AuthenticationError for a token TokenReview does not authenticate', async () => {
    await assert.rejects(
      authenticator().authenticate('forged-token'),
      (error: unknown) => error instanceof AuthenticationError && !error.message.includes('forged-token'),
    );
    await assert.rejects(authenticator().authenticate(''), AuthenticationError);
  });

  it('checks audiences: a token for another audience is not authenticated', async () => {
    assert.equal((await authenticator({ audiences: ['gitops-scaffolder'] }).authenticate('scoped-token')).identity, CONTROLLER);
    assert.deepEqual(double.requests.findLast((r) => r.path.endsWith('/tokenreviews'))?.body, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'scoped-token', audiences: ['gitops-scaffolder'] },
    });
    await assert.rejects(authenticator({ audiences: ['gitops-scaffolder'] }).authenticate('controller-token'), AuthenticationError);
  });

  it('caches an allowed identity briefly, shares one review between concurrent calls, and never caches rejections', async () => {
    const cached = authenticator({ cacheTtlMs: 60_000 });
    const before = reviews();
    await Promise.all([cached.authenticate('controller-token'), cached.authenticate('controller-token'), cached.authenticate('controller-token')]);
    await cached.authenticate('controller-token');
    assert.equal(reviews() - before, 1);

    const rejected = reviews();
    await assert.rejects(cached.authenticate('stranger-token'), ForbiddenError);
    await assert.rejects(cached.authenticate('stranger-token'), ForbiddenError);
    assert.equal(reviews() - rejected, 2);

    const uncached = authenticator({ cacheTtlMs: 0 });
    const again = reviews();
    await uncached.authenticate('controller-token');
    await uncached.authenticate('controller-token');
    assert.equal(reviews() - again, 2);
  });

  it('forgets a cached identity once the TTL has passed: a revoked token stops working', async (t) => {
    let now = Date.now();
    t.mock.method(Date, 'now', () => now);
    double.setTokenReview('revocable-token', { authenticated: true, user: { username: CONTROLLER } });
    const cached = authenticator({ cacheTtlMs: 5_000 });
    assert.equal((await cached.authenticate('revocable-token')).identity, CONTROLLER);
    double.setTokenReview('revocable-token', { authenticated: false });
    // Within the TTL the cached identity answers, without a review.
    const before = reviews();
    now += 4_999;
    assert.equal((await cached.authenticate('revocable-token')).identity, CONTROLLER);
    assert.equal(reviews(), before);
    now += 2;
    await assert.rejects(cached.authenticate('revocable-token'), AuthenticationError);
    assert.equal(reviews(), before + 1);
    await assert.rejects(cached.authenticate('revocable-token'), AuthenticationError);
  });

  it('refuses a token an audience-unaware TokenReview authenticates without naming the configured audience', async (t) => {
    // The double intersects audiences the way an audience-aware API server does; this server does not.
    let audiences: string[] | undefined;
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { spec: unknown };
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: body.spec,
            status: { authenticated: true, user: { username: CONTROLLER }, ...(audiences === undefined ? {} : { audiences }) },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const { port } = server.address() as AddressInfo;
    const file = join(dir, 'audience-unaware');
    await writeFile(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 'service-token' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
      { mode: 0o600 },
    );
    const subject = (): TokenReviewAuthenticator =>
      new TokenReviewAuthenticator({
        kubeConfig: loadKubeConfig({ kind: 'file', path: file }),
        audiences: ['gitops-scaffolder'],
        allowed: [CONTROLLER],
        cacheTtlMs: 0,
      });
    audiences = ['gitops-scaffolder'];
    assert.equal((await subject().authenticate('unaware-token')).identity, CONTROLLER);
    for (const answer of [['https://kubernetes.default.svc.cluster.local'], [], undefined]) {
      audiences = answer;
      await assert.rejects(
        subject().authenticate('unaware-token'),
        (error: unknown) => error instanceof AuthenticationError && /not valid for this service/.test(error.message),
        JSON.stringify(answer),
      );
    }
  });

  it('throws UnavailableError when TokenReview answers 5xx', async () => {
    double.injectFailure({ path: /tokenreviews$/, code: 500 });
    await assert.rejects(authenticator().authenticate('controller-token'), UnavailableError);
  });

  it("throws UnavailableError when the API server refuses our own credentials (not the caller's fault)", async () => {
    const wrong = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir, { token: 'not-the-service-token', fileName: 'wrong' }) });
    const subject = new TokenReviewAuthenticator({ kubeConfig: wrong, allowed: [CONTROLLER] });
    await assert.rejects(subject.authenticate('controller-token'), UnavailableError);
  });

  it('without an allow-list, accepts any authenticated user (an OIDC user too) with their groups, for RBAC to decide', async () => {
    double.setTokenReview('oidc-token', { authenticated: true, user: { username: 'oidc:alice@example.com', groups: ['oidc:platform-team'] } });
    const open = new TokenReviewAuthenticator({ kubeConfig: loadKubeConfig({ kind: 'file', path: kubeconfigPath }), allowed: [] });
    const alice = await open.authenticate('oidc-token');
    assert.equal(alice.identity, 'oidc:alice@example.com');
    assert.deepEqual(alice.groups, ['oidc:platform-team']);
    assert.equal((await open.authenticate('stranger-token')).identity, 'system:serviceaccount:default:stranger');
    await assert.rejects(open.authenticate('forged-token'), AuthenticationError);
  });

  it('rejects allow-list entries that are not ServiceAccount usernames', () => {
    assert.throws(() => authenticator({ allowed: ['*'] }), ValidationError);
    assert.throws(() => authenticator({ allowed: ['system:serviceaccount:*:*'] }), ValidationError);
    assert.throws(() => authenticator({ allowed: ['admin'] }), ValidationError);
  });

  it('never logs a token', () => {
    for (const event of events) {
      for (const token of ['controller-token', 'ci-token', 'stranger-token', 'scoped-token', 'forged-token']) {
        assert.ok(!event.includes(token), `logged ${token}: ${event}`);
      }
    }
  });

  it('throws UnavailableError when the API server is unreachable', async () => {
    const subject = authenticator({ cacheTtlMs: 0 });
    await double.stop();
    await assert.rejects(subject.authenticate('controller-token'), UnavailableError);
  });
});
