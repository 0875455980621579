/**
 * A KubeConfig whose requests never follow a redirect.
 *
 * client-node 1.4 sends every request through node-fetch 2, which follows
 * redirects and drops `Authorization` only when the host changes: an API server
 * (or whatever answers at a kubeconfig's `server`) that redirects to the same
 * host on another port receives the bearer token there, and so does anything
 * listening on that port. The Kubernetes API never redirects a client for the
 * calls this service makes, so a 3xx is answered to the caller as it is (an API
 * error with that status), never followed:
 *
 * - generated API clients (`makeApiClient`) send through {@link NoRedirectHttpLibrary},
 *   node's own http(s) client, which follows nothing;
 * - `Log` and `Watch`, which call node-fetch themselves with
 *   `applyToFetchOptions`, get `redirect: 'manual'` there (they then fail on the
 *   status, as on any non-200).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RequestOptions } from 'node:https';
import {
  KubeConfig,
  ResponseContext,
  ServerConfiguration,
  createConfiguration,
  wrapHttpLibrary,
  type HttpLibrary,
  type RequestContext,
} from '@kubernetes/client-node';

type ApiConstructor<T> = new (configuration: ReturnType<typeof createConfiguration>) => T;

/** Sends one request with node's http(s) client (which never follows a redirect) and hands back whatever status it gets. */
class NoRedirectHttpLibrary {
  send(request: RequestContext): Promise<ResponseContext> {
    const url = new URL(request.getUrl());
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const body = request.getBody();
    if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
      // FormData bodies are for file uploads, which no call of this service makes.
      return Promise.reject(new Error('a Kubernetes API request with a form body is not supported'));
    }
    return new Promise<ResponseContext>((resolve, reject) => {
      const signal = request.getSignal();
      const agent = request.getAgent();
      const req = send(
        url,
        {
          method: request.getHttpMethod(),
          // A length, as node-fetch sends, rather than a chunked body.
          headers: { ...request.getHeaders(), ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) },
          ...(agent === undefined ? {} : { agent }),
          ...(signal === undefined ? {} : { signal }),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const data = Buffer.concat(chunks);
            resolve(new ResponseContext(res.statusCode ?? 0, headersOf(res.headers), { text: async () => data.toString('utf8'), binary: async () => data }));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]])),
  );
}

const noRedirects: HttpLibrary = wrapHttpLibrary(new NoRedirectHttpLibrary());

/** {@link KubeConfig} with the same clusters, users and contexts, whose clients refuse redirects. */
export class RedirectRefusingKubeConfig extends KubeConfig {
  /** A copy of `source` (its clusters, users, contexts and current context). */
  static of(source: KubeConfig): RedirectRefusingKubeConfig {
    if (source instanceof RedirectRefusingKubeConfig) return source;
    const copy = new RedirectRefusingKubeConfig();
    copy.loadFromOptions({
      clusters: source.getClusters(),
      users: source.getUsers(),
      contexts: source.getContexts(),
      currentContext: source.getCurrentContext(),
    });
    return copy;
  }

  override makeApiClient<T>(apiClientType: ApiConstructor<T>): T {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    // What KubeConfig.makeApiClient builds, with the HTTP library replaced.
    return new apiClientType(
      createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: this }, httpApi: noRedirects }),
    );
  }

  override async applyToFetchOptions(opts: RequestOptions): Promise<Awaited<ReturnType<KubeConfig['applyToFetchOptions']>>> {
    return { ...(await super.applyToFetchOptions(opts)), redirect: 'manual' };
  }
}
