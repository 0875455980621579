/**
 * fetch that follows redirects itself so credentials never reach another origin.
 *
 * fetch's own redirect handling drops only `Authorization` (and undici also
 * `Cookie` and `Proxy-Authorization`) when a redirect leaves the origin; a
 * GitLab `PRIVATE-TOKEN`, or any other credential header, goes along. Here a
 * same-origin redirect keeps every header, and a cross-origin one either
 * keeps only the headers in {@link HEADERS_KEPT_ACROSS_ORIGINS} (allowlist:
 * a credential header under any name is dropped) or is refused, as the
 * client chooses. Once dropped, credentials stay dropped for the later hops,
 * even one that comes back to the first origin. An https request is never
 * redirected to plain http, and at most `maxRedirects` hops are followed.
 *
 * Every forge client (Octokit, gitbeaker's requester, the Gitea client) and
 * the OCI registry client send their requests through this.
 */
import { UnavailableError } from './errors.js';

/** What to do with a redirect to another origin. */
export type CrossOriginRedirects =
  /** Follow it with only the allowlisted headers (an OCI blob redirected to its storage host). */
  | 'drop-credentials'
  /** Fail: an API client configured for one origin has no business elsewhere. */
  | 'refuse';

export interface RedirectSafeFetchOptions {
  /** Who is asking, for messages: `GitLab`, `registry ghcr.io`. */
  readonly client: string;
  readonly crossOrigin: CrossOriginRedirects;
  /** @default 5 */
  readonly maxRedirects?: number;
  /** The fetch that sends each hop. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** Headers that carry no credential and survive a redirect to another origin. */
export const HEADERS_KEPT_ACROSS_ORIGINS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'content-language',
  'content-type',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-unmodified-since',
  'range',
  'user-agent',
]);

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A redirect this fetch would not follow. Its message names origins and paths only (a query may hold a signature). */
export class RedirectRefusedError extends UnavailableError {}

/** `scheme://host[:port]/path`, without a query or fragment. */
function where(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function headersKeptAcrossOrigins(headers: Headers): Headers {
  const kept = new Headers();
  for (const [name, value] of headers) if (HEADERS_KEPT_ACROSS_ORIGINS.has(name)) kept.set(name, value);
  return kept;
}

/** A fetch with the same signature as the global one that follows redirects by the rules above. */
export function redirectSafeFetch(options: RedirectSafeFetchOptions): typeof fetch {
  const send = options.fetch ?? globalThis.fetch;
  const maxRedirects = options.maxRedirects ?? 5;
  return async (input, init) => {
    const first = new Request(input, init);
    // Buffered once so a 307/308 can send it again.
    let body: ArrayBuffer | undefined = first.body === null ? undefined : await first.arrayBuffer();
    let method = first.method;
    let headers = new Headers(first.headers);
    let url = new URL(first.url);
    const signal = first.signal;
    for (let hops = 0; ; hops++) {
      const response = await send(url, { method, headers, signal, redirect: 'manual', ...(body === undefined ? {} : { body }) });
      const location = response.headers.get('location');
      if (!REDIRECT_STATUSES.has(response.status) || location === null || first.redirect === 'manual') return response;
      await response.body?.cancel().catch(() => undefined);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new RedirectRefusedError(`${options.client}: ${method} ${where(url)} redirected to an unusable location`);
      }
      const refuse = (why: string): never => {
        throw new RedirectRefusedError(`${options.client}: ${method} ${where(url)} was redirected to ${where(next)}; ${why}`);
      };
      if (first.redirect === 'error') refuse('the request does not follow redirects');
      if (hops >= maxRedirects) refuse(`not following more than ${maxRedirects} redirects`);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') refuse('only http(s) is followed');
      if (url.protocol === 'https:' && next.protocol === 'http:') refuse('an https request is not followed to plain http');
      if (next.origin !== url.origin) {
        if (options.crossOrigin === 'refuse') refuse(`another origin than ${url.origin}: configure the client with the URL it should use`);
        headers = headersKeptAcrossOrigins(headers);
      }
      // What browsers and undici do: 303 (except HEAD), and 301/302 after a POST, continue as a GET without the body.
      if ((response.status === 303 && method !== 'HEAD') || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) headers.delete(name);
      }
      url = next;
    }
  };
}
