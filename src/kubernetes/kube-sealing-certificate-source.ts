/**
 * The new cluster's sealing certificate, fetched from its Sealed Secrets
 * controller through the Kubernetes API (steps 4 and 5 of a run).
 *
 * The certificate is fetched the way kubeseal does it (pkg/kubeseal: `openCert`
 * / `getServicePortName`): read the controller's Service, take its FIRST port's
 * name, and GET `services/http:NAME:PORTNAME/proxy/v1/cert.pem` through the API
 * server's service proxy. The upstream controller.yaml leaves that port unnamed,
 * which gives an empty segment (a trailing colon); the Helm chart names it `http`.
 * No port-forward: the proxy runs over the same authenticated connection as every
 * other API call.
 */
import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { AppsV1Api, CoreV1Api, Watch, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import { NotFoundError, TimeoutError, UnavailableError, ValidationError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import type { SealingCertificateSource, SealingControllerRef } from '../run/ports.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { kubeApiFailureOf, kubeApiFailureSummary } from './kube-api-error.js';
import { abortReason, withSignal } from './with-signal.js';
import { RedirectRefusingKubeConfig } from './redirect-refusing-kube-config.js';

/** What KubeSealingCertificateSource needs. */
export interface KubeSealingCertificateSourceDeps {
  /** Credentials for the NEW cluster's API server. */
  readonly kubeConfig: KubeConfig;
  readonly logger?: Logger;
  /**
   * The longest a single watch is trusted before the Deployment is read again
   * (a watch can go silent without closing), and the pause after a failed read.
   * @default 15000
   */
  readonly pollIntervalMs?: number;
}

/** The fields of a Deployment this file reads; both the typed model and raw watch JSON have them. */
interface DeploymentLike {
  readonly spec?: { readonly replicas?: number };
  readonly status?: {
    readonly readyReplicas?: number;
    readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason?: string; readonly message?: string }[];
  };
}

// The controller serves one or more PEM blocks; a 1 MiB cap leaves room for many keys.
const MAX_CERT_BYTES = 1024 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/;

function isAvailable(deployment: DeploymentLike | undefined): boolean {
  return deployment?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;
}

/** "not found", "Available=False (MinimumReplicasUnavailable: …), replicas ready 0/1", … */
function describe(deployment: DeploymentLike | undefined): string {
  if (!deployment) return 'not found';
  const replicas = `replicas ready ${deployment.status?.readyReplicas ?? 0}/${deployment.spec?.replicas ?? 1}`;
  const condition = deployment.status?.conditions?.find((c) => c.type === 'Available');
  if (!condition) return `no Available condition yet, ${replicas}`;
  const why = [condition.reason, condition.message].filter(Boolean).join(': ');
  return `Available=${condition.status}${why ? ` (${why})` : ''}, ${replicas}`;
}

/** Implements SealingCertificateSource against a real (or double) Kubernetes API. */
export class KubeSealingCertificateSource implements SealingCertificateSource {
  private readonly kubeConfig: KubeConfig;
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly watcher: Watch;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;

  constructor(deps: KubeSealingCertificateSourceDeps) {
    // Redirects are never followed: node-fetch would carry the token to another port of the host.
    this.kubeConfig = RedirectRefusingKubeConfig.of(deps.kubeConfig);
    this.apps = this.kubeConfig.makeApiClient(AppsV1Api);
    this.core = this.kubeConfig.makeApiClient(CoreV1Api);
    this.watcher = new Watch(this.kubeConfig);
    this.logger = (deps.logger ?? silentLogger).child({ component: 'sealing-certificate-source' });
    this.pollIntervalMs = deps.pollIntervalMs ?? 15_000;
  }

  /**
   * Lists the Deployment (by field selector, so "not found" still yields a
   * resourceVersion), then watches it from that version until its `Available`
   * condition is `True`; the watch is renewed at least every `pollIntervalMs`.
   * Transient API errors are retried until the deadline.
   *
   * @throws TimeoutError naming the Deployment and the state it was last seen in
   * @throws UnavailableError when the API server rejects the credentials (401/403): waiting will not help
   * @throws the signal's reason when `signal` aborts
   */
  async waitForController(
    controller: SealingControllerRef,
    options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
  ): Promise<void> {
    const { namespace, name } = controller;
    const what = `Deployment ${namespace}/${name}`;
    const timeout = AbortSignal.timeout(Math.max(0, options.timeoutMs));
    const stop = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const log = this.logger.child({ namespace, deployment: name });
    let lastSeen = 'not read yet';

    while (!stop.aborted) {
      let items: readonly DeploymentLike[];
      let resourceVersion: string | undefined;
      try {
        const list = await this.apps.listNamespacedDeployment(
          { namespace, fieldSelector: `metadata.name=${name}` },
          withSignal(stop),
        );
        items = list.items;
        resourceVersion = list.metadata?.resourceVersion;
      } catch (error) {
        if (stop.aborted) break;
        const { code } = kubeApiFailureOf(error);
        if (code === 401 || code === 403) {
          throw new UnavailableError(`cannot read ${what}: the API server refused the credentials (${kubeApiFailureSummary(error)})`, { cause: error });
        }
        lastSeen = `unknown (the API server could not be read: ${kubeApiFailureSummary(error)})`;
        log.warn({ error: kubeApiFailureSummary(error) }, 'reading the controller Deployment failed; retrying');
        await interruptibleSleep(this.pollIntervalMs, stop);
        continue;
      }
      const deployment = items[0];
      lastSeen = describe(deployment);
      if (isAvailable(deployment)) return;
      log.debug({ state: lastSeen }, 'controller not Available yet; watching');

      const outcome = await this.watchUntilAvailable(namespace, name, resourceVersion, stop, (seen) => {
        lastSeen = describe(seen);
      });
      if (outcome === 'available') return;
      if (outcome === 'failed') await interruptibleSleep(Math.min(this.pollIntervalMs, 1000), stop);
    }

    if (options.signal?.aborted) throw abortReason(options.signal);
    throw new TimeoutError(
      `${what} did not become Available within ${Math.round(options.timeoutMs / 100) / 10}s; last seen: ${lastSeen}`,
    );
  }

  /**
   * One watch from `resourceVersion`. Resolves `available` on an event showing
   * Available=True, `again` when the watch ends normally (server timeout, 410
   * Expired, renewal) and `failed` when it ends with an error.
   */
  private watchUntilAvailable(
    namespace: string,
    name: string,
    resourceVersion: string | undefined,
    stop: AbortSignal,
    onSeen: (deployment: DeploymentLike | undefined) => void,
  ): Promise<'available' | 'again' | 'failed'> {
    return new Promise((resolve) => {
      let settled = false;
      let controller: AbortController | undefined;
      const finish = (outcome: 'available' | 'again' | 'failed'): void => {
        if (settled) return;
        settled = true;
        clearTimeout(renewal);
        stop.removeEventListener('abort', onAbort);
        controller?.abort();
        resolve(outcome);
      };
      const onAbort = (): void => finish('again');
      stop.addEventListener('abort', onAbort, { once: true });
      // Bounded trust in one watch: renew it even if the server never closes it.
      const renewal = setTimeout(() => finish('again'), this.pollIntervalMs);

      this.watcher
        .watch(
          `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/deployments`,
          {
            fieldSelector: `metadata.name=${name}`,
            allowWatchBookmarks: true,
            timeoutSeconds: Math.max(1, Math.ceil(this.pollIntervalMs / 1000)),
            ...(resourceVersion ? { resourceVersion } : {}),
          },
          (type: string, object: unknown) => {
            if (type === 'ADDED' || type === 'MODIFIED') {
              const deployment = object as DeploymentLike;
              onSeen(deployment);
              if (isAvailable(deployment)) finish('available');
            } else if (type === 'DELETED') {
              onSeen(undefined);
            } else if (type === 'ERROR') {
              // Typically 410 Expired: the resourceVersion was compacted; list again.
              finish('again');
            }
          },
          (error: unknown) => finish(error && !settled && !stop.aborted ? 'failed' : 'again'),
        )
        .then(
          (c) => {
            controller = c;
            if (settled) c.abort();
          },
          () => finish('failed'),
        );
    });
  }

  /**
   * Reads the controller's Service, then GETs `/v1/cert.pem` through the API
   * server's service proxy on the Service's first port, as kubeseal does.
   *
   * @returns the PEM text the controller served
   * @throws NotFoundError when the Service does not exist or declares no port
   * @throws UnavailableError when the API server or the controller cannot answer
   *   (including 503 "no endpoints available") or the answer is not a PEM certificate
   * @throws the signal's reason when `signal` aborts
   */
  async fetchCertificate(controller: SealingControllerRef, options: { readonly signal?: AbortSignal }): Promise<string> {
    const { namespace, name } = controller;
    const { signal } = options;
    let service: V1Service;
    try {
      service = await this.core.readNamespacedService({ namespace, name }, withSignal(signal));
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      if (kubeApiFailureOf(error).code === 404) {
        throw new NotFoundError(`Service ${namespace}/${name} not found (the Sealed Secrets controller's Service)`, { cause: error });
      }
      throw new UnavailableError(`cannot read Service ${namespace}/${name}: ${kubeApiFailureSummary(error)}`, { cause: error });
    }
    const first = service.spec?.ports?.[0];
    if (!first) throw new NotFoundError(`Service ${namespace}/${name} declares no port`);
    // kubeseal: `service.Spec.Ports[0].Name`, empty for an unnamed port.
    const portName = first.name ?? '';
    const path =
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/` +
      `http:${encodeURIComponent(name)}:${encodeURIComponent(portName)}/proxy/v1/cert.pem`;

    const answer = await this.get(path, signal);
    const where = `Service ${namespace}/${name} port "${portName}"`;
    if (answer.status === 404) {
      throw new NotFoundError(`${where}: /v1/cert.pem not found through the service proxy${answer.statusMessage ? ` (${answer.statusMessage})` : ''}`);
    }
    if (answer.status !== 200) {
      throw new UnavailableError(
        `${where}: the service proxy answered HTTP ${answer.status}${answer.statusMessage ? ` (${answer.statusMessage})` : ''}`,
      );
    }
    const block = PEM_CERTIFICATE.exec(answer.body)?.[0];
    try {
      if (!block) throw new Error('no CERTIFICATE block');
      new X509Certificate(block);
    } catch (cause) {
      throw new UnavailableError(`${where}: /v1/cert.pem did not return a PEM certificate`, { cause });
    }
    this.logger.info({ namespace, service: name, port: portName }, 'fetched the sealing certificate');
    return answer.body;
  }

  /**
   * A GET through the kubeconfig's own transport: its CA, client certificate,
   * bearer token or auth plugin, applied by `applyToHTTPSOptions`. The generated
   * `connectGetNamespacedServiceProxyWithPath` is not used: it percent-encodes
   * the colons and the slash of the path, and its deserializer rejects the
   * controller's `application/x-pem-file` content type.
   */
  private async get(path: string, signal: AbortSignal | undefined): Promise<{ status: number; statusMessage?: string; body: string }> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new ValidationError('kubeconfig: the current context names no cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + path);
    // Same Accept header as kubeseal (`application/x-pem-file, */*`).
    const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/x-pem-file, */*' } };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const transport = url.protocol === 'https:' ? https : http;

    return new Promise((resolve, reject) => {
      const fail = (error: unknown): void => {
        if (signal?.aborted) reject(abortReason(signal));
        else if (error instanceof UnavailableError) reject(error);
        else reject(new UnavailableError(`GET ${url.pathname} through the Kubernetes API failed: ${kubeApiFailureSummary(error)}`, { cause: error }));
      };
      const request = transport.request(url, { ...options, ...(signal ? { signal } : {}) }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_CERT_BYTES) {
            request.destroy(new UnavailableError(`GET ${url.pathname}: the answer exceeds ${MAX_CERT_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', fail);
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          let statusMessage: string | undefined;
          if (status !== 200 && /json/.test(response.headers['content-type'] ?? '')) {
            // The apiserver's own errors are Status objects: their message is safe to repeat.
            try {
              const parsed = JSON.parse(body) as { kind?: unknown; message?: unknown };
              if (parsed.kind === 'Status' && typeof parsed.message === 'string') statusMessage = parsed.message;
            } catch {
              // not JSON after all
            }
          }
          resolve({ status, body, ...(statusMessage ? { statusMessage } : {}) });
        });
      });
      request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(Object.assign(new Error('request timed out'), { code: 'ETIMEDOUT' })));
      request.on('error', fail);
      request.end();
    });
  }
}
