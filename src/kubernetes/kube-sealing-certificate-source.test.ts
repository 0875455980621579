import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeConfig } from '@kubernetes/client-node';
import { startKubeApiDouble, type KubeApiDouble } from '../../test/support/kube-api-double.js';
import { controllerEncrypt, controllerUnseal } from '../../test/support/controller-unseal.js';
import { serveSealedSecretsController } from '../../test/support/sealed-secrets-controller-double.js';
import { ConflictError, NotFoundError, TimeoutError, UnavailableError } from '../errors.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { loadKubeConfig } from './kube-config.js';
import { KubeSealingCertificateSource } from './kube-sealing-certificate-source.js';

const certificatePem = createTestCertificate().certificatePem;

function serveCertificate(double: KubeApiDouble, namespace: string, service: string, port: string): void {
  double.setProxyHandler(namespace, service, port, (request) =>
    request.path === '/v1/cert.pem'
      ? { status: 200, headers: { 'Content-Type': 'application/x-pem-file' }, body: certificatePem }
      : { status: 404, body: '404 page not found\n' },
  );
}

describe('KubeSealingCertificateSource', () => {
  let double: KubeApiDouble;
  let dir: string;
  let source: KubeSealingCertificateSource;
  let kubeConfig: KubeConfig;

  before(async () => {
    double = await startKubeApiDouble();
    dir = await mkdtemp(join(tmpdir(), 'kube-sealing-'));
    kubeConfig = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir) });
    source = new KubeSealingCertificateSource({ kubeConfig, pollIntervalMs: 200 });
  });

  after(async () => {
    await double.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe('waitForController', () => {
    /**
     * Resolves once the double has received a request to `namespace`'s Deployments
     * matching `watch` (a list or a watch) since `from`: the waiter is then really
     * waiting, on a slow machine too, where a fixed sleep could end before it asked.
     */
    const asked = async (namespace: string, watch: boolean, from = 0): Promise<void> => {
      const path = `/apis/apps/v1/namespaces/${namespace}/deployments`;
      const deadline = Date.now() + 10_000;
      while (!double.requests.slice(from).some((r) => r.path === path && (r.query['watch'] === 'true') === watch)) {
        if (Date.now() > deadline) throw new Error(`no ${watch ? 'watch' : 'list'} of ${path} within 10 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };

    it('returns at once when the Deployment is already Available', async () => {
      double.setDeploymentAvailable('sealed-secrets', 'ready-now', true);
      await source.waitForController({ namespace: 'sealed-secrets', name: 'ready-now' }, { timeoutMs: 2000 });
    });

    it('waits while Available=False and resolves on the watch event when the condition flips', async () => {
      // A renewal interval far beyond the test: only the watch event can end the wait in time.
      const watching = new KubeSealingCertificateSource({ kubeConfig, pollIntervalMs: 60_000 });
      double.setDeploymentAvailable('kube-system', 'sealed-secrets-controller', false);
      const from = double.requests.length;
      let resolved = false;
      const waiting = watching.waitForController({ namespace: 'kube-system', name: 'sealed-secrets-controller' }, { timeoutMs: 5000 }).then(() => {
        resolved = true;
      });
      // It has listed (Available=False) and is watching: only now does "not resolved" mean something.
      await asked('kube-system', true, from);
      assert.equal(resolved, false, 'must not resolve while Available=False');
      const flipped = Date.now();
      double.setDeploymentAvailable('kube-system', 'sealed-secrets-controller', true);
      await waiting;
      assert.ok(Date.now() - flipped < 3000, 'resolved by the MODIFIED event, not by a later re-list');
      const lists = double.requests.slice(from).filter((r) => r.path === '/apis/apps/v1/namespaces/kube-system/deployments' && !r.query['watch']);
      assert.equal(lists.length, 1, 'one list, then the watch');
      const watches = double.requests.filter((r) => r.path === '/apis/apps/v1/namespaces/kube-system/deployments' && r.query['watch'] === 'true');
      assert.ok(watches.length >= 1, 'waited with a watch');
      assert.equal(watches[0]?.query['fieldSelector'], 'metadata.name=sealed-secrets-controller');
      assert.match(watches[0]?.query['resourceVersion'] ?? '', /^\d+$/, 'the watch resumes from the list resourceVersion');
    });

    it('waits for a Deployment that does not exist yet', async () => {
      const from = double.requests.length;
      const waiting = source.waitForController({ namespace: 'late', name: 'sealed-secrets' }, { timeoutMs: 5000 });
      // Seen missing first: the Deployment appears while the waiter watches.
      await asked('late', true, from);
      double.setDeploymentAvailable('late', 'sealed-secrets', true);
      await waiting;
    });

    it('times out with a TimeoutError naming the Deployment and its last state', async () => {
      double.setDeploymentAvailable('kube-system', 'stuck', false);
      await assert.rejects(source.waitForController({ namespace: 'kube-system', name: 'stuck' }, { timeoutMs: 500 }), (error: unknown) => {
        assert.ok(error instanceof TimeoutError);
        assert.match(error.message, /Deployment kube-system\/stuck/);
        assert.match(error.message, /Available=False \(MinimumReplicasUnavailable/);
        assert.match(error.message, /replicas ready 0\/1/);
        return true;
      });
    });

    it('times out naming a missing Deployment as not found', async () => {
      await assert.rejects(
        source.waitForController({ namespace: 'kube-system', name: 'absent' }, { timeoutMs: 400 }),
        (error: unknown) => error instanceof TimeoutError && /kube-system\/absent.*last seen: not found/.test(error.message),
      );
    });

    it('stops when the signal aborts, with the signal reason', async () => {
      double.setDeploymentAvailable('kube-system', 'aborted', false);
      const controller = new AbortController();
      const from = double.requests.length;
      const waiting = source.waitForController({ namespace: 'kube-system', name: 'aborted' }, { timeoutMs: 10_000, signal: controller.signal });
      // Aborted while it watches, not before it started.
      await asked('kube-system', true, from);
      controller.abort(new Error('run cancelled'));
      await assert.rejects(waiting, /run cancelled/);
    });

    it('fails fast with UnavailableError when the API server refuses the credentials', async () => {
      const refused = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir, { token: 'revoked', fileName: 'revoked' }) });
      const started = Date.now();
      await assert.rejects(
        new KubeSealingCertificateSource({ kubeConfig: refused }).waitForController({ namespace: 'kube-system', name: 'x' }, { timeoutMs: 10_000 }),
        (error: unknown) => error instanceof UnavailableError && /401/.test(error.message) && !error.message.includes('revoked'),
      );
      assert.ok(Date.now() - started < 5000, 'did not wait for the timeout');
    });

    it('keeps waiting through a transient API failure', async () => {
      double.setDeploymentAvailable('flaky', 'sealed-secrets', false);
      double.injectFailure({ method: 'GET', path: /^\/apis\/apps\/v1\/namespaces\/flaky\/deployments$/, code: 503, times: 1 });
      const from = double.requests.length;
      const waiting = source.waitForController({ namespace: 'flaky', name: 'sealed-secrets' }, { timeoutMs: 5000 });
      // The 503 was served and the waiter went on to watch: the failure did not end the wait.
      await asked('flaky', true, from);
      double.setDeploymentAvailable('flaky', 'sealed-secrets', true);
      await waiting;
    });
  });

  describe('fetchCertificate', () => {
    it("uses the Service's first port name (Helm chart: http) in the proxy path", async () => {
      double.setService('sealed-secrets', 'sealed-secrets', {
        ports: [
          { name: 'http', port: 8080 },
          { name: 'metrics', port: 8081 },
        ],
      });
      serveCertificate(double, 'sealed-secrets', 'sealed-secrets', 'http');
      const pem = await source.fetchCertificate({ namespace: 'sealed-secrets', name: 'sealed-secrets' }, {});
      assert.equal(pem, certificatePem);
      const paths = double.requests.map((r) => r.path);
      const serviceRead = paths.indexOf('/api/v1/namespaces/sealed-secrets/services/sealed-secrets');
      const proxied = paths.indexOf('/api/v1/namespaces/sealed-secrets/services/http:sealed-secrets:http/proxy/v1/cert.pem');
      assert.ok(serviceRead >= 0, 'read the Service first');
      assert.ok(proxied > serviceRead, 'then went through the service proxy with the port name');
    });

    it('uses an empty port segment (trailing colon) for an unnamed port, like kubeseal', async () => {
      double.setService('kube-system', 'sealed-secrets-controller', { ports: [{ port: 8080 }] });
      serveCertificate(double, 'kube-system', 'sealed-secrets-controller', '');
      const pem = await source.fetchCertificate({ namespace: 'kube-system', name: 'sealed-secrets-controller' }, {});
      assert.equal(pem, certificatePem);
      assert.ok(double.requests.some((r) => r.path === '/api/v1/namespaces/kube-system/services/http:sealed-secrets-controller:/proxy/v1/cert.pem'));
    });

    it("sends the kubeconfig bearer token and kubeseal's Accept header to the proxy", async () => {
      let seen: { authorization?: string; accept?: string } = {};
      double.setService('auth-check', 'sealed-secrets', { ports: [{ name: 'http', port: 8080 }] });
      double.setProxyHandler('auth-check', 'sealed-secrets', 'http', (request) => {
        seen = { authorization: request.headers.authorization, accept: request.headers.accept };
        return { status: 200, headers: { 'Content-Type': 'application/x-pem-file' }, body: certificatePem };
      });
      await source.fetchCertificate({ namespace: 'auth-check', name: 'sealed-secrets' }, {});
      assert.equal(seen.authorization, `Bearer ${double.token}`);
      assert.equal(seen.accept, 'application/x-pem-file, */*');
    });

    it("turns the proxy's 503 (no endpoints for that port) into UnavailableError", async () => {
      double.setService('no-endpoints', 'sealed-secrets', { ports: [{ name: 'http', port: 8080 }] });
      await assert.rejects(
        source.fetchCertificate({ namespace: 'no-endpoints', name: 'sealed-secrets' }, {}),
        (error: unknown) => error instanceof UnavailableError && /503/.test(error.message) && /no endpoints available/.test(error.message),
      );
    });

    it('throws NotFoundError when the Service does not exist', async () => {
      await assert.rejects(source.fetchCertificate({ namespace: 'kube-system', name: 'nope' }, {}), NotFoundError);
    });

    it('rejects an answer that is not a PEM certificate', async () => {
      double.setService('html', 'sealed-secrets', { ports: [{ name: 'http', port: 8080 }] });
      double.setProxyHandler('html', 'sealed-secrets', 'http', () => ({ status: 200, headers: { 'Content-Type': 'text/html' }, body: '<html>hi</html>' }));
      await assert.rejects(
        source.fetchCertificate({ namespace: 'html', name: 'sealed-secrets' }, {}),
        (error: unknown) => error instanceof UnavailableError && /not return a PEM certificate/.test(error.message),
      );
    });

    it('rejects a CERTIFICATE block that is not a certificate', async () => {
      double.setService('garbled', 'sealed-secrets', { ports: [{ name: 'http', port: 8080 }] });
      double.setProxyHandler('garbled', 'sealed-secrets', 'http', () => ({
        status: 200,
        headers: { 'Content-Type': 'application/x-pem-file' },
        body: '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
      }));
      await assert.rejects(
        source.fetchCertificate({ namespace: 'garbled', name: 'sealed-secrets' }, {}),
        (error: unknown) => error instanceof UnavailableError && /not return a PEM certificate/.test(error.message),
      );
    });

    it('takes no certificate from a redirect answer, even one whose body holds a certificate', async () => {
      double.setService('moved', 'sealed-secrets', { ports: [{ name: 'http', port: 8080 }] });
      double.setProxyHandler('moved', 'sealed-secrets', 'http', () => ({
        status: 302,
        headers: { 'Content-Type': 'application/x-pem-file', Location: 'http://127.0.0.1:1/v1/cert.pem' },
        body: certificatePem,
      }));
      await assert.rejects(
        source.fetchCertificate({ namespace: 'moved', name: 'sealed-secrets' }, {}),
        (error: unknown) => error instanceof UnavailableError && /answered HTTP 302/.test(error.message),
      );
    });

    it('stops reading an answer larger than 1 MiB', async () => {
      double.setService('huge', 'sealed-secrets', { ports: [{ name: 'http', port: 8080 }] });
      double.setProxyHandler('huge', 'sealed-secrets', 'http', () => ({
        status: 200,
        headers: { 'Content-Type': 'application/x-pem-file' },
        body: certificatePem + '#'.repeat(1024 * 1024),
      }));
      await assert.rejects(
        source.fetchCertificate({ namespace: 'huge', name: 'sealed-secrets' }, {}),
        (error: unknown) => error instanceof UnavailableError && /exceeds 1048576 bytes/.test(error.message),
      );
    });

    it('turns an unreachable API server into UnavailableError', async () => {
      const gone = await startKubeApiDouble();
      const kubeConfig = loadKubeConfig({ kind: 'file', path: await gone.writeKubeconfig(dir, { fileName: 'gone' }) });
      await gone.stop();
      const offline = new KubeSealingCertificateSource({ kubeConfig });
      await assert.rejects(offline.fetchCertificate({ namespace: 'kube-system', name: 'sealed-secrets-controller' }, {}), UnavailableError);
    });
  });

  describe("reencrypt (the controller's /v1/rotate)", () => {
    const place = { namespace: 'rotate', name: 'sealed-secrets-controller' };
    const oldKey = createTestCertificate();
    const newKey = createTestCertificate();
    const controller = serveSealedSecretsControllerOnce();
    /** A SealedSecret sealed for `key`, as Git holds it (strict scope: the label is namespace/name). */
    const sealedFor = (key: ReturnType<typeof createTestCertificate>, values: Record<string, string>) => ({
      apiVersion: 'bitnami.com/v1alpha1',
      kind: 'SealedSecret',
      metadata: { name: 'db', namespace: 'database', annotations: { 'gitops-scaffolder.io/sealed-with': 'sha256:old' } },
      spec: {
        template: { metadata: { name: 'db', namespace: 'database' }, type: 'Opaque' },
        encryptedData: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, controllerEncrypt(key.publicKey, 'database/db', Buffer.from(v))])),
      },
    });
    function serveSealedSecretsControllerOnce() {
      let served: ReturnType<typeof serveSealedSecretsController> | undefined;
      return () => (served ??= serveSealedSecretsController(double, place, oldKey));
    }

    it('POSTs the SealedSecret as JSON through the service proxy and gets the same values sealed with the newest key', async () => {
      controller().renewKey(newKey);
      const answer = (await source.reencrypt(place, sealedFor(oldKey, { password: 'kept-password-1', username: 'app' }), {})) as Parameters<
        typeof controllerUnseal
      >[0];
      const opened = controllerUnseal(answer, newKey.privateKey);
      assert.deepEqual(Object.fromEntries(Object.entries(opened).map(([k, v]) => [k, v.toString('utf8')])), { password: 'kept-password-1', username: 'app' });
      assert.throws(() => controllerUnseal(answer, oldKey.privateKey), Error, 'sealed with the newest key, not the old one');
      // Upstream's Rotate copies differing metadata into the template: why a caller keeps only encryptedData.
      assert.equal(
        (answer as unknown as { spec: { template: { metadata: { annotations?: Record<string, string> } } } }).spec.template.metadata.annotations?.[
          'gitops-scaffolder.io/sealed-with'
        ],
        'sha256:old',
      );
      const sent = double.requests.filter((r) => r.path === '/api/v1/namespaces/rotate/services/http:sealed-secrets-controller:http/proxy/v1/rotate');
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.method, 'POST');
      assert.equal(sent[0]!.contentType, 'application/json');
    });

    it('throws ConflictError naming the SealedSecret when no key the controller holds opens it (its 500)', async () => {
      controller();
      const lost = createTestCertificate();
      await assert.rejects(
        source.reencrypt(place, sealedFor(lost, { password: 'gone' }), {}),
        (error: unknown) =>
          error instanceof ConflictError &&
          /SealedSecret database\/db \(HTTP 500\)/.test(error.message) &&
          /no longer has/.test(error.message) &&
          !error.message.includes('gone'),
      );
    });

    it('names the API server and what to check when the controller cannot be reached', async () => {
      controller();
      double.injectFailure({ method: 'POST', path: /\/proxy\/v1\/rotate$/, code: 503 });
      await assert.rejects(
        source.reencrypt(place, sealedFor(oldKey, { password: 'x' }), {}),
        (error: unknown) =>
          error instanceof UnavailableError &&
          error.message.includes(double.url) &&
          /HTTP 503/.test(error.message) &&
          /kubectl -n rotate get deployment,endpoints sealed-secrets-controller/.test(error.message),
      );
      const gone = await startKubeApiDouble();
      const offline = new KubeSealingCertificateSource({
        kubeConfig: loadKubeConfig({ kind: 'file', path: await gone.writeKubeconfig(dir, { fileName: 'gone-rotate' }) }),
      });
      await gone.stop();
      await assert.rejects(
        offline.reencrypt(place, sealedFor(oldKey, { password: 'x' }), {}),
        (error: unknown) => error instanceof UnavailableError && error.message.includes(gone.url) && /could not be reached/.test(error.message),
      );
    });
  });
});
