/**
 * A small client of the OCI distribution API (https://github.com/opencontainers/distribution-spec/blob/main/spec.md),
 * enough to push an artifact into one repository: check that a blob exists
 * (`HEAD /v2/<name>/blobs/<digest>`), upload a blob monolithically (`POST
 * /v2/<name>/blobs/uploads/`, then `PUT <Location>?digest=<digest>` with the
 * bytes) and put a manifest under a tag (`PUT /v2/<name>/manifests/<tag>`).
 *
 * Authentication follows the registry's `WWW-Authenticate` challenge, like the
 * docker and containers/image clients do: anonymous first; `Basic` with the
 * credentials; or the token flow (https://distribution.github.io/distribution/spec/auth/token/),
 * `GET <realm>?service=<service>&scope=repository:<name>:pull,push` with the
 * credentials as Basic auth (or anonymously), and the returned token as
 * `Bearer` from then on. The credentials go only to the registry's own origin
 * and to the token realm, never to a redirect or upload location elsewhere,
 * and never over plain HTTP unless the registry is on loopback or `insecure` says so.
 *
 * Every failure is an error of the shared vocabulary; messages name the
 * registry, the method and the path, never a credential, a token or a query string.
 */
import { createHash } from 'node:crypto';
import { type AppError, AuthenticationError, ForbiddenError, NotFoundError, TimeoutError, UnavailableError, ValidationError } from '../errors.js';
import { redactSecrets } from '../git/git-process.js';
import { isLoopbackHost } from '../model/repository-url.js';
import { RedirectRefusedError, redirectSafeFetch } from '../redirect-safe-fetch.js';
import type { OciReference } from './oci-reference.js';
import { assertOciDigest, assertOciTag, parseOciReference } from './oci-reference.js';
import { basicAuthorization, parseChallenges } from './www-authenticate.js';

/** Username and password (or token) for a registry. */
export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

/** How to reach one repository of a registry. */
export interface RegistryClientOptions {
  /** The repository to push to; its tag or digest, if any, is ignored. */
  readonly reference: OciReference | string;
  /** Omitted: anonymous access. */
  readonly credentials?: RegistryCredentials;
  /**
   * Talk plain HTTP to the registry (and allow an `http:` token realm).
   * @default true when the registry is on loopback (localhost, 127.0.0.0/8, ::1), false otherwise
   */
  readonly insecure?: boolean;
  /** Aborting cancels the request in flight and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Limit of each HTTP request, including its body. @default 120000 */
  readonly timeoutMs?: number;
  /** The fetch implementation. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** The outcome of {@link RegistryClient.pushBlob}. */
export interface PushedBlob {
  readonly digest: string;
  readonly size: number;
  /** False when the registry already had the blob and nothing was sent. */
  readonly uploaded: boolean;
}

const USER_AGENT = 'gitops-scaffolder';
const DEFAULT_TIMEOUT_MS = 120_000;

/** The registry's error codes and messages from an error body (`{"errors":[{"code","message"}]}`), if any. */
async function errorDetail(response: Response): Promise<string> {
  let text: string;
  try {
    text = await response.text();
  } catch {
    return '';
  }
  try {
    const body = JSON.parse(text) as { errors?: { code?: unknown; message?: unknown }[] };
    if (Array.isArray(body.errors)) {
      const parts = body.errors
        .map((e) => [typeof e.code === 'string' ? e.code : '', typeof e.message === 'string' ? e.message : ''].filter(Boolean).join(': '))
        .filter(Boolean);
      if (parts.length > 0) return parts.join('; ').slice(0, 500);
    }
  } catch {
    // Not JSON: say nothing rather than echo an HTML page.
  }
  return '';
}

async function discard(response: Response): Promise<void> {
  try {
    await response.arrayBuffer();
  } catch {
    // The body is of no interest; a broken one does not matter either.
  }
}

/**
 * A distribution-API client bound to one repository of one registry. It keeps
 * the authorization it negotiated and reuses it for every later request.
 */
export class RegistryClient {
  /** `host[:port]`. */
  readonly registry: string;
  readonly repository: string;
  /** `http(s)://host[:port]`. */
  readonly baseUrl: URL;

  readonly #credentials: RegistryCredentials | undefined;
  readonly #insecure: boolean;
  readonly #signal: AbortSignal | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  /** The Authorization header value negotiated so far. */
  #authorization: string | undefined;
  /** Literal strings to scrub from messages: the password and any token. */
  readonly #secrets: string[] = [];

  constructor(options: RegistryClientOptions) {
    const reference = typeof options.reference === 'string' ? parseOciReference(options.reference) : options.reference;
    this.registry = reference.registry;
    this.repository = reference.repository;
    const probe = new URL(`http://${reference.registry}`);
    this.#insecure = options.insecure ?? isLoopbackHost(probe.hostname);
    this.baseUrl = new URL(`${this.#insecure ? 'http' : 'https'}://${reference.registry}`);
    this.#credentials = options.credentials;
    if (options.credentials) this.#secrets.push(options.credentials.password, basicAuthorization(options.credentials).slice('Basic '.length));
    this.#signal = options.signal;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // A blob may be redirected to its storage host: followed, without the registry's credentials.
    this.#fetch = redirectSafeFetch({ client: `registry ${this.registry}`, crossOrigin: 'drop-credentials', fetch: options.fetch ?? globalThis.fetch });
  }

  /**
   * Whether the repository holds the blob (`HEAD /v2/<name>/blobs/<digest>`).
   *
   * @throws AuthenticationError / ForbiddenError when the registry refuses access
   * @throws UnavailableError when the registry cannot be reached or fails
   */
  async blobExists(digest: string): Promise<boolean> {
    assertOciDigest(digest);
    const url = this.#url(`blobs/${digest}`);
    const response = await this.#request('HEAD', url, {});
    await discard(response);
    if (response.status === 200) return true;
    if (response.status === 404) return false;
    throw await this.#failure('HEAD', url, response);
  }

  /**
   * Uploads a blob unless the repository has it already: `HEAD`, then a
   * monolithic upload (`POST …/blobs/uploads/`, `PUT <Location>&digest=…`).
   *
   * @param digest the expected `sha256:` digest; computed when omitted
   * @throws ValidationError when `digest` does not match the content
   * @throws AuthenticationError / ForbiddenError when the registry refuses access
   * @throws UnavailableError when the registry cannot be reached, fails, or stores a different digest
   */
  async pushBlob(content: Uint8Array, digest?: string): Promise<PushedBlob> {
    const actual = `sha256:${createHash('sha256').update(content).digest('hex')}`;
    if (digest !== undefined && digest !== actual)
      throw new ValidationError([{ field: 'digest', message: `${digest} is not the digest of the content (${actual})` }]);
    const size = content.byteLength;
    if (await this.blobExists(actual)) return { digest: actual, size, uploaded: false };

    const start = this.#url('blobs/uploads/');
    const started = await this.#request('POST', start, {});
    const location = started.headers.get('location');
    await discard(started);
    if (started.status !== 202 || !location) {
      if (started.status === 202) throw new UnavailableError(`registry ${this.registry}: POST ${start.pathname} returned no upload location`);
      throw await this.#failure('POST', start, started);
    }
    const upload = new URL(location, start);
    this.#assertTransport(upload, 'upload location');
    upload.search = `${upload.search ? `${upload.search}&` : '?'}digest=${encodeURIComponent(actual)}`;
    const finished = await this.#request('PUT', upload, {
      body: content,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (finished.status !== 201) throw await this.#failure('PUT', upload, finished);
    const stored = finished.headers.get('docker-content-digest');
    await discard(finished);
    if (stored && stored !== actual) throw new UnavailableError(`registry ${this.registry}: stored blob ${actual} as ${stored}`);
    return { digest: actual, size, uploaded: true };
  }

  /**
   * Puts a manifest under a tag (`PUT /v2/<name>/manifests/<tag>`).
   *
   * @returns the manifest's digest, `sha256:<hex>` of `content`
   * @throws ValidationError when the tag is invalid or the registry rejects the manifest
   * @throws AuthenticationError / ForbiddenError when the registry refuses access
   * @throws UnavailableError when the registry cannot be reached, fails, or reports another digest
   */
  async putManifest(tag: string, content: Uint8Array, mediaType: string): Promise<string> {
    assertOciTag(tag);
    const digest = `sha256:${createHash('sha256').update(content).digest('hex')}`;
    const url = this.#url(`manifests/${tag}`);
    const response = await this.#request('PUT', url, {
      body: content,
      headers: { 'content-type': mediaType },
    });
    if (response.status !== 201) throw await this.#failure('PUT', url, response);
    const stored = response.headers.get('docker-content-digest');
    await discard(response);
    if (stored && stored !== digest) throw new UnavailableError(`registry ${this.registry}: stored manifest ${digest} as ${stored}`);
    return digest;
  }

  #url(suffix: string): URL {
    return new URL(`/v2/${this.repository}/${suffix}`, this.baseUrl);
  }

  /** Refuses to talk plain HTTP to a host other than the (insecure) registry or a loopback one. */
  #assertTransport(url: URL, what: string): void {
    if (url.protocol === 'https:') return;
    if (url.protocol === 'http:' && (this.#insecure || isLoopbackHost(url.hostname))) return;
    throw new UnavailableError(`registry ${this.registry}: refusing the ${what} ${url.protocol}//${url.host}${url.pathname} (not https)`);
  }

  /** Sends a request with the negotiated authorization; answers one 401 challenge and retries once. */
  async #request(method: string, url: URL, init: { body?: Uint8Array; headers?: Record<string, string> }): Promise<Response> {
    const toRegistry = url.origin === this.baseUrl.origin;
    let answered = false;
    for (;;) {
      const headers: Record<string, string> = { 'user-agent': USER_AGENT, ...init.headers };
      const sent = toRegistry ? this.#authorization : undefined;
      if (sent) headers['authorization'] = sent;
      const response = await this.#send(method, url, headers, init.body);
      if (response.status !== 401 || answered || !toRegistry) return response;
      const header = response.headers.get('www-authenticate') ?? '';
      await discard(response);
      answered = true;
      await this.#answer(header, sent);
    }
  }

  /** Sets `#authorization` from a 401's challenge, or throws when no answer can succeed. */
  async #answer(header: string, sent: string | undefined): Promise<void> {
    const challenges = parseChallenges(header);
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    const basic = challenges.find((c) => c.scheme === 'basic');
    if (bearer) {
      if (bearer.params['error'] === 'insufficient_scope' && sent?.startsWith('Bearer ')) {
        throw new ForbiddenError(`registry ${this.registry}: not allowed to push to ${this.repository}`);
      }
      this.#authorization = `Bearer ${await this.#token(bearer.params)}`;
      return;
    }
    if (basic) {
      if (!this.#credentials) throw new AuthenticationError(`registry ${this.registry} requires credentials`);
      if (sent?.startsWith('Basic ')) throw new AuthenticationError(`registry ${this.registry} refused the credentials`);
      this.#authorization = basicAuthorization(this.#credentials);
      return;
    }
    throw new AuthenticationError(`registry ${this.registry} asks for authentication this client does not support`);
  }

  /** The token flow: GET realm?service=…&scope=… with the credentials as Basic auth. */
  async #token(params: Readonly<Record<string, string>>): Promise<string> {
    const realmText = params['realm'];
    let realm: URL;
    try {
      realm = new URL(realmText ?? '');
    } catch {
      throw new AuthenticationError(`registry ${this.registry} sent a token challenge without a usable realm`);
    }
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && (this.#insecure || isLoopbackHost(realm.hostname)))) {
      throw new AuthenticationError(`registry ${this.registry}: refusing the token realm ${realm.protocol}//${realm.host}${realm.pathname} (not https)`);
    }
    const scopes = new Set<string>();
    for (const scope of (params['scope'] ?? '').split(' ')) if (scope) scopes.add(scope);
    scopes.add(`repository:${this.repository}:pull,push`);
    if (params['service']) realm.searchParams.set('service', params['service']);
    for (const scope of scopes) realm.searchParams.append('scope', scope);

    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'application/json' };
    if (this.#credentials) headers['authorization'] = basicAuthorization(this.#credentials);
    const response = await this.#send('GET', realm, headers, undefined);
    const where = `token service ${realm.host}${realm.pathname}`;
    if (response.status === 401 || response.status === 403) {
      await discard(response);
      throw new AuthenticationError(
        this.#credentials ? `registry ${this.registry}: ${where} refused the credentials` : `registry ${this.registry}: ${where} refused anonymous access`,
      );
    }
    if (response.status !== 200) {
      await discard(response);
      throw new UnavailableError(`registry ${this.registry}: ${where} returned ${response.status}`);
    }
    let token: unknown;
    try {
      const body = (await response.json()) as { token?: unknown; access_token?: unknown };
      token = body.token ?? body.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== 'string' || token.length === 0) throw new UnavailableError(`registry ${this.registry}: ${where} returned no token`);
    this.#secrets.push(token);
    return token;
  }

  /** One HTTP exchange; transport failures, timeouts and aborts become errors of the vocabulary. */
  async #send(method: string, url: URL, headers: Record<string, string>, body: Uint8Array | undefined): Promise<Response> {
    if (this.#signal?.aborted) throw this.#signal.reason;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = this.#signal ? AbortSignal.any([this.#signal, timeout]) : timeout;
    try {
      // Redirects are followed (a blob HEAD may be sent to storage); redirectSafeFetch
      // drops every credential header when a redirect leaves the origin.
      return await this.#fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), signal });
    } catch (error) {
      if (this.#signal?.aborted) throw this.#signal.reason;
      if (error instanceof RedirectRefusedError) throw error;
      if (timeout.aborted) throw new TimeoutError(`registry ${this.registry}: ${method} ${url.pathname} did not finish within ${this.#timeoutMs} ms`);
      const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
      const code = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : (error as Error).message;
      throw new UnavailableError(redactSecrets(`registry ${this.registry}: ${method} ${url.host}${url.pathname} failed: ${code}`, this.#secrets), {
        cause: error,
      });
    }
  }

  /** The error for an unexpected status; the registry's own error codes are included. */
  async #failure(method: string, url: URL, response: Response): Promise<AppError> {
    const detail = redactSecrets(await errorDetail(response), this.#secrets);
    const message = `registry ${this.registry}: ${method} ${url.pathname} returned ${response.status}${detail ? ` (${detail})` : ''}`;
    const status = response.status;
    if (status === 401 && /insufficient_scope/.test(response.headers.get('www-authenticate') ?? '')) {
      return new ForbiddenError(`${message}: not allowed to push to ${this.repository}`);
    }
    if (status === 401) return new AuthenticationError(this.#credentials ? `${message}: the credentials were refused` : `${message}: credentials are required`);
    if (status === 403) return new ForbiddenError(message);
    if (status === 404) return new NotFoundError(message);
    if (status === 408 || status === 429 || status >= 500) return new UnavailableError(message);
    if (status >= 400) return new ValidationError(message);
    return new UnavailableError(message);
  }
}
