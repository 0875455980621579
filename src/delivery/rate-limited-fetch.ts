/**
 * fetch that waits out a forge's rate limits instead of failing on them: a 429
 * (or a 403 carrying `retry-after`, GitHub's secondary limit) is retried after
 * what `retry-after` or the `ratelimit-reset` header asks, a 502/503 after a
 * short backoff, at most `retries` times. Used by the Gitea client and by the
 * requester given to gitbeaker, whose own retry ignores `retry-after`.
 *
 * Each request goes through {@link forgeFetch}: a redirect to another origin is
 * refused, so a forge token (`PRIVATE-TOKEN`, `Authorization`) never leaves
 * the forge it was configured for.
 */
import { interruptibleSleep } from '../interruptible-sleep.js';
import type { Logger } from '../logger.js';
import { redirectSafeFetch } from '../redirect-safe-fetch.js';

/**
 * The fetch every forge client sends through. Cross-origin redirects are
 * refused rather than followed without the token: a forge API is configured
 * with its origin, an anonymous answer from elsewhere would only turn into a
 * puzzling 401 or 404 (or a write sent to a stranger), and the refusal names
 * the origin the forge pointed at (an `http://` API URL redirected to
 * `https://` is fixed by configuring the `https://` one).
 */
export function forgeFetch(forge: string): typeof fetch {
  return redirectSafeFetch({ client: forge, crossOrigin: 'refuse' });
}

export interface RateLimitedFetchOptions {
  readonly forge: string;
  readonly logger: Logger;
  /** @default 5 */
  readonly retries?: number;
  /** The longest single wait a header may ask for. @default 15 minutes */
  readonly maxWaitMs?: number;
  readonly now?: () => number;
}

/**
 * How long a throttled response asks to wait, in ms; undefined when it says nothing.
 * `retry-after` is seconds or an HTTP date; `ratelimit-reset` (GitLab) and
 * `x-ratelimit-reset` (GitHub, Gitea) an epoch second, when nothing remains.
 */
export function waitAskedFor(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const remaining = headers.get('ratelimit-remaining') ?? headers.get('x-ratelimit-remaining');
  const reset = headers.get('ratelimit-reset') ?? headers.get('x-ratelimit-reset');
  if (remaining === '0' && reset !== null && Number.isFinite(Number(reset))) return Math.max(0, Number(reset) * 1000 - now + 1000);
  return undefined;
}

/** @returns the first response that is not a rate limit, or the last one when retries run out */
export async function rateLimitedFetch(makeRequest: () => Request, options: RateLimitedFetchOptions): Promise<Response> {
  const retries = options.retries ?? 5;
  const maxWaitMs = options.maxWaitMs ?? 15 * 60_000;
  const now = options.now ?? Date.now;
  const send = forgeFetch(options.forge);
  for (let attempt = 0; ; attempt++) {
    const request = makeRequest();
    const response = await send(request);
    const asked = waitAskedFor(response.headers, now());
    const limited = response.status === 429 || (response.status === 403 && asked !== undefined);
    const flaky = response.status === 502 || response.status === 503;
    if ((!limited && !flaky) || attempt >= retries) return response;
    const waitMs = Math.min(maxWaitMs, asked ?? 2 ** attempt * 1000);
    options.logger.warn(
      {
        event: 'forge_rate_limited',
        forge: options.forge,
        kind: limited ? 'rate_limit' : 'unavailable',
        status: response.status,
        retry_after_s: Math.round(waitMs / 1000),
        attempt: attempt + 1,
      },
      `${options.forge} answered ${response.status} to ${request.method} ${new URL(request.url).pathname}; retrying in ${Math.round(waitMs / 1000)}s`,
    );
    await response.body?.cancel().catch(() => undefined);
    await interruptibleSleep(waitMs, request.signal);
    request.signal.throwIfAborted();
  }
}
