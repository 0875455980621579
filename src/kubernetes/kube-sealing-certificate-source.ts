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
 *
 * A SealedSecret is re-encrypted the same way (`kubeseal --re-encrypt`,
 * pkg/kubeseal `ReEncryptSealedSecret`): POSTed as JSON to `/v1/rotate` on that
 * port. What the controller does there is read from its source at tag v0.36.6
 * of bitnami-labs/sealed-secrets (pkg/controller/server.go and controller.go
 * `Rotate`): it decrypts with whichever key it holds and seals the same values
 * with its newest key (the one /v1/cert.pem serves), answering 200 with the
 * new SealedSecret as JSON (no apiVersion or kind; labelled text/plain, as the
 * handler sets its Content-Type too late), or 500 with an empty body when it
 * cannot decode or decrypt the object. No value ever leaves the controller.
 */
import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { AppsV1Api, CoreV1Api, Watch, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import { ConflictError, NotFoundError, TimeoutError, UnavailableError, ValidationError } from '../errors.js';
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

// The controller serves one or more PEM blocks, or one re-encrypted SealedSecret (at most a
// Secret, 1 MiB, grown by sealing): the cap bounds what a misbehaving proxy can make us buffer.
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
  async waitForController(controller: SealingControllerRef, options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<void> {
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
        const list = await this.apps.listNamespacedDeployment({ namespace, fieldSelector: `metadata.name=${name}` }, withSignal(stop));
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
    throw new TimeoutError(`${what} did not become Available within ${Math.round(options.timeoutMs / 100) / 10}s; last seen: ${lastSeen}`);
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
    const { portName, base } = await this.proxyBase(controller, signal);
    const path = `${base}/v1/cert.pem`;

    const answer = await this.send('GET', path, { accept: 'application/x-pem-file, */*' }, signal);
    const where = `Service ${namespace}/${name} port "${portName}"`;
    if (answer.status === 404) {
      throw new NotFoundError(`${where}: /v1/cert.pem not found through the service proxy${answer.statusMessage ? ` (${answer.statusMessage})` : ''}`);
    }
    if (answer.status !== 200) {
      throw new UnavailableError(`${where}: the service proxy answered HTTP ${answer.status}${answer.statusMessage ? ` (${answer.statusMessage})` : ''}`);
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
   * POSTs one SealedSecret to the controller's `/v1/rotate` through the service
   * proxy (see the file's comment for what the controller does with it).
   *
   * @returns the controller's answer, parsed: a SealedSecret sealed with its newest key
   * @throws ConflictError when the controller answers 500: it cannot decrypt the
   *   SealedSecret with any key it holds (or cannot read it as one)
   * @throws UnavailableError when the API server or the controller cannot be
   *   reached, naming the API server's address and what to check
   * @throws the signal's reason when `signal` aborts
   */
  async reencrypt(
    controller: SealingControllerRef,
    sealedSecret: Readonly<Record<string, unknown>>,
    options: { readonly signal?: AbortSignal },
  ): Promise<unknown> {
    const { namespace, name } = controller;
    const { signal } = options;
    const metadata = sealedSecret['metadata'] as { namespace?: unknown; name?: unknown } | undefined;
    const which = `SealedSecret ${String(metadata?.namespace ?? '')}/${String(metadata?.name ?? '')}`;
    const server = this.serverAddress();
    const check = `check that ${server} is reachable from the runner and that Deployment ${namespace}/${name} is Available with ready endpoints (kubectl -n ${namespace} get deployment,endpoints ${name}), then retry the run`;
    let base: string;
    let answer: { status: number; statusMessage?: string; body: string };
    try {
      ({ base } = await this.proxyBase(controller, signal));
      // The body is the SealedSecret as Git holds it: ciphertext only.
      answer = await this.send('POST', `${base}/v1/rotate`, { accept: 'application/json, */*', body: JSON.stringify(sealedSecret) }, signal);
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      throw new UnavailableError(
        `cannot re-encrypt ${which}: the Sealed Secrets controller ${namespace}/${name} could not be reached through the API server at ${server} (${error instanceof Error ? error.message : String(error)}): ${check}`,
        { cause: error },
      );
    }
    if (answer.status === 500) {
      // Upstream answers 500 (empty body) for anything Rotate fails on; for a SealedSecret that
      // decoded before (it did, when it was sealed) that is a value no held key opens.
      throw new ConflictError(
        `the Sealed Secrets controller ${namespace}/${name} cannot re-encrypt ${which} (HTTP 500): none of the keys it holds decrypts it, so it was sealed with a key the controller no longer has (a cluster rebuilt without restoring its sealed-secrets-key Secrets) and the cluster cannot read it either. Restore the old key to ${namespace} and retry, re-encrypt offline with the old private key (gitops-scaffolder rotate --recovery-private-key), or seal fresh values (the controller's log says why it refused)`,
      );
    }
    if (answer.status !== 200) {
      throw new UnavailableError(
        `cannot re-encrypt ${which}: the API server at ${server} answered HTTP ${answer.status} for the controller's /v1/rotate${answer.statusMessage ? ` (${answer.statusMessage})` : ''}: ${check}`,
      );
    }
    try {
      return JSON.parse(answer.body) as unknown;
    } catch (cause) {
      throw new UnavailableError(`cannot re-encrypt ${which}: the controller's /v1/rotate answer through ${server} is not JSON`, { cause });
    }
  }

  /** The API server's address as the kubeconfig names it (scheme, host and port: never a credential). */
  private serverAddress(): string {
    const server = this.kubeConfig.getCurrentCluster()?.server;
    if (!server) return "the kubeconfig's server";
    try {
      return new URL(server).origin;
    } catch {
      return "the kubeconfig's server";
    }
  }

  /**
   * Reads the controller's Service and builds the proxy path of its first port, as kubeseal does.
   * @throws NotFoundError when the Service does not exist or declares no port
   */
  private async proxyBase(controller: SealingControllerRef, signal: AbortSignal | undefined): Promise<{ portName: string; base: string }> {
    const { namespace, name } = controller;
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
    return {
      portName,
      base: `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/` + `http:${encodeURIComponent(name)}:${encodeURIComponent(portName)}/proxy`,
    };
  }

  /**
   * A request through the kubeconfig's own transport: its CA, client certificate,
   * bearer token or auth plugin, applied by `applyToHTTPSOptions`. The generated
   * `connect*NamespacedServiceProxyWithPath` are not used: they percent-encode
   * the colons and the slash of the path, and their deserializers reject the
   * controller's `application/x-pem-file` and `text/plain` content types.
   */
  private async send(
    method: 'GET' | 'POST',
    path: string,
    what: { readonly accept: string; readonly body?: string },
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; statusMessage?: string; body: string }> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new ValidationError('kubeconfig: the current context names no cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + path);
    // The Accept headers are kubeseal's; a body is JSON, as kubeseal marshals the SealedSecret.
    const options: https.RequestOptions = {
      method,
      headers: {
        Accept: what.accept,
        ...(what.body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(what.body) } : {}),
      },
    };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const transport = url.protocol === 'https:' ? https : http;

    return new Promise((resolve, reject) => {
      const fail = (error: unknown): void => {
        if (signal?.aborted) reject(abortReason(signal));
        else if (error instanceof UnavailableError) reject(error);
        else reject(new UnavailableError(`${method} ${url.pathname} through the Kubernetes API failed: ${kubeApiFailureSummary(error)}`, { cause: error }));
      };
      const request = transport.request(url, { ...options, ...(signal ? { signal } : {}) }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_CERT_BYTES) {
            request.destroy(new UnavailableError(`${method} ${url.pathname}: the answer exceeds ${MAX_CERT_BYTES} bytes`));
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
      request.end(what.body);
    });
  }
}
