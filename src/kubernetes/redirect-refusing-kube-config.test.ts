import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { CoreV1Api, KubeConfig, Log } from '@kubernetes/client-node';
import { TimeoutError, UnavailableError } from '../errors.js';
import { contractRunOf } from '../service/run-executor.contract.js';
import { KubeJobExecutor } from './kube-job-executor.js';
import { KubeSealingCertificateSource } from './kube-sealing-certificate-source.js';
import { RedirectRefusingKubeConfig } from './redirect-refusing-kube-config.js';
import { SubjectAccessReviewAuthorizer } from './subject-access-review-authorizer.js';
import { TokenReviewAuthenticator } from './token-review-authenticator.js';

const TOKEN = 'redirect-test-token-SECRET-0123456789';

/** A loopback listener that records the Authorization header of every request it gets. */
async function listen(handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('RedirectRefusingKubeConfig', () => {
  // The "API server" redirects every request to the same host on another port, where something else listens.
  const elsewhere: (string | undefined)[] = [];
  const bodies: string[] = [];
  let api: { server: Server; port: number };
  let other: { server: Server; port: number };
  let kubeConfig: KubeConfig;

  before(async () => {
    other = await listen((req, res) => {
      elsewhere.push(req.headers.authorization);
      req.on('data', (chunk: Buffer) => bodies.push(chunk.toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}');
    });
    api = await listen((req, res) => {
      // 307: a POST is sent again with its body (a TokenReview carries the caller's token there).
      res.writeHead(307, { location: `http://127.0.0.1:${other.port}${req.url ?? '/'}` }).end();
    });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${api.port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: TOKEN }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  after(async () => {
    api.server.closeAllConnections();
    other.server.closeAllConnections();
    await Promise.all([new Promise((r) => api.server.close(r)), new Promise((r) => other.server.close(r))]);
  });

  it('(the threat) plain client-node follows the redirect and sends the token to the other port', async () => {
    elsewhere.length = 0;
    await kubeConfig.makeApiClient(CoreV1Api).readNamespacedPod({ namespace: 'ns', name: 'p' });
    assert.deepEqual(elsewhere, [`Bearer ${TOKEN}`]);
  });

  it('an API client answers the redirect as an error with its status, and nothing reaches the other port', async () => {
    elsewhere.length = 0;
    const core = RedirectRefusingKubeConfig.of(kubeConfig).makeApiClient(CoreV1Api);
    await assert.rejects(core.readNamespacedPod({ namespace: 'ns', name: 'p' }), (error: unknown) => (error as { code?: number }).code === 307);
    assert.deepEqual(elsewhere, []);
  });

  it("the service's TokenReview refuses the caller, sending neither its own token nor the caller's to the other port", async () => {
    elsewhere.length = 0;
    bodies.length = 0;
    const authenticator = new TokenReviewAuthenticator({ kubeConfig });
    await assert.rejects(authenticator.authenticate('caller-token-SECRET-abcdef0123456789'));
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(bodies, []);
  });

  it('the SubjectAccessReview authorizer answers a redirect as unavailable, sending nothing to the other port', async () => {
    elsewhere.length = 0;
    bodies.length = 0;
    const authorizer = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 0 });
    await assert.rejects(
      authorizer.authorize({ identity: 'alice@example.com', groups: ['team'] }, { resource: 'scaffolds', verb: 'create' }),
      UnavailableError,
    );
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(bodies, []);
  });

  it("the sealing certificate source reads the controller's Service and Deployment without following the redirect", async () => {
    elsewhere.length = 0;
    const source = new KubeSealingCertificateSource({ kubeConfig, pollIntervalMs: 100 });
    await assert.rejects(source.fetchCertificate({ namespace: 'kube-system', name: 'sealed-secrets-controller' }, {}), UnavailableError);
    await assert.rejects(source.waitForController({ namespace: 'kube-system', name: 'sealed-secrets-controller' }, { timeoutMs: 500 }), TimeoutError);
    assert.deepEqual(elsewhere, []);
  });

  it("the Job executor sends neither its token nor the run's Secret to the other port, and inspect and cancel follow no redirect either", async () => {
    elsewhere.length = 0;
    bodies.length = 0;
    const executor = new KubeJobExecutor({ kubeConfig, namespace: 'ns', image: 'registry.example.net/runner:1' });
    const run = contractRunOf({ id: 'r1-redirect', job: '' });
    await assert.rejects(executor.start(run, { repositoryCredentials: { token: 'glpat-SECRET-run-token' } }), UnavailableError);
    await assert.rejects(executor.inspect(run), UnavailableError);
    await assert.rejects(executor.cancel(run), UnavailableError);
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(bodies, []);
  });

  it('a log stream (node-fetch called by client-node itself) fails on the redirect, and nothing reaches the other port', async () => {
    elsewhere.length = 0;
    const log = new Log(RedirectRefusingKubeConfig.of(kubeConfig));
    await assert.rejects(log.log('ns', 'p', 'runner', new PassThrough(), { follow: false }));
    assert.deepEqual(elsewhere, []);
  });

  it('still talks to an API server that answers (the token goes where the kubeconfig says)', async () => {
    const seen: (string | undefined)[] = [];
    const direct = await listen((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns"}}');
    });
    try {
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: [{ name: 'c', server: `http://127.0.0.1:${direct.port}`, skipTLSVerify: true }],
        users: [{ name: 'u', token: TOKEN }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const pod = await RedirectRefusingKubeConfig.of(config).makeApiClient(CoreV1Api).readNamespacedPod({ namespace: 'ns', name: 'p' });
      assert.equal(pod.metadata?.name, 'p');
      assert.deepEqual(seen, [`Bearer ${TOKEN}`]);
    } finally {
      direct.server.closeAllConnections();
      await new Promise((r) => direct.server.close(r));
    }
  });
});
