/**
 * The one repository-URL policy. A URL is parsed the way git will read it, not
 * the way a browser would: WHATWG's URL parser turns `http://localhost\@evil/`
 * into host `localhost` where curl (and so git) connects to `evil`, and reads
 * `https:host/x` as `https://host/x` where git sees scp-style ssh to host
 * `https`. So the grammar here is git's, narrowed to what the product needs,
 * and a URL is accepted only when git's reading and WHATWG's agree on the host.
 *
 * What a caller may reach is a separate, configured decision
 * ({@link RepositoryUrlPolicy}): plain-text transports, scp-style addresses,
 * local repositories and an operator's allow-list.
 */
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../errors.js';

/** The transports a repository URL may use. */
export type RemoteKind = 'https' | 'http' | 'ssh' | 'git' | 'file';

/** A repository URL git will read exactly as this module did. */
export interface RemoteUrl {
  readonly kind: RemoteKind;
  /** What to hand git: the URL as given, or a `file://` URL for an absolute path. */
  readonly url: string;
  /** Lower-case host name (brackets removed for IPv6); undefined for local repositories. */
  readonly host?: string;
  /** `scheme://host[:port]/` for http(s), used to scope the Authorization header to this server. */
  readonly origin?: string;
  /** The local repository's absolute path, for `file` remotes. */
  readonly path?: string;
  /** The URL without user info, fit for logs and messages. */
  readonly display: string;
}

/**
 * What a URL may reach, beyond being well formed. Data, so the service, the
 * runner and tests state their policy instead of re-implementing a check.
 */
export interface RepositoryUrlPolicy {
  /** `[user@]host:path` addresses. */
  readonly scp: boolean;
  /** `http://` and `git://`: unencrypted, unauthenticated transports. */
  readonly plainTransports: 'any' | 'loopback' | 'never';
  /** Local repositories (`file://` or an absolute path): any, or only these absolute paths. */
  readonly localRepositories: 'any' | readonly string[];
  /**
   * When given, the URL must equal one of these or start with one that ends
   * in "/" (an operator's allow-list); a listed local repository or plain
   * transport is then allowed whatever the rules above say.
   */
  readonly allowList?: readonly string[];
}

/**
 * The policy of a process an operator runs with inputs it trusts (the runner
 * started by the service, the CLI): every transport git supports here, any
 * local repository. The syntax rules still hold.
 */
export const OPERATOR_POLICY: RepositoryUrlPolicy = { scp: true, plainTransports: 'any', localRepositories: 'any' };

const SUPPORTED = 'use https://, ssh:// or file:///';
const DOT_SEGMENT = 'has a "." or ".." path segment or an encoded "/", which would reach another repository than the one written';
const MAX_LENGTH = 2048;
const SCHEMES: Readonly<Record<string, RemoteKind>> = { https: 'https', http: 'http', ssh: 'ssh', git: 'git', file: 'file' };
// RFC 3986 path characters; no "?" or "#": git would pass them on to the server as part of the path.
const URL_PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$/;
// Local paths: no percent-escapes (git decodes some and not others), no quoting games.
const LOCAL_PATH = /^\/[A-Za-z0-9._~+,=@/-]+$/;
const HOST_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;
// An ssh login; never starting with "-", which ssh would read as an option.
const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]*$/;

/**
 * Whether a remote path has a "." or ".." segment (percent-encoded too) or an
 * encoded "/" or "\\": curl resolves `/platform/../other.git` to `/other.git`
 * before git asks the server, and servers decode `%2e` and `%2f`, so the
 * repository reached would not be the one the text (and an allow-list prefix) names.
 */
function movesAcrossSegments(path: string): boolean {
  if (/%(2f|5c)/i.test(path)) return true;
  return path.split('/').some((segment) => {
    const dots = segment.replace(/%2e/gi, '.');
    return dots === '.' || dots === '..';
  });
}

function refuse(field: string, message: string): ValidationError {
  return new ValidationError([{ field, message }]);
}

/** Whether a host is this machine's loopback interface, as git's resolver would see it. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(bare);
  return octets !== null && octets.slice(1).every((octet) => Number(octet) <= 255);
}

function checkLocalPath(path: string, field: string): string {
  if (!LOCAL_PATH.test(path)) throw refuse(field, 'names a local path with characters git may read differently (only letters, digits and . _ ~ + , = @ / -)');
  const segments = path.split('/').slice(1);
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw refuse(field, 'names a local path with an empty, "." or ".." part');
  }
  return path;
}

/** Host and optional port of an authority, checked against WHATWG's reading of the same URL. */
function checkAuthority(authority: string, kind: RemoteKind, value: string, field: string): { host: string; user?: string } {
  let rest = authority;
  let user: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at !== -1) {
    user = rest.slice(0, at);
    rest = rest.slice(at + 1);
    // ssh://git@host names the login, which is not a secret; anything else there is a credential.
    if (kind === 'ssh' && user.startsWith('-')) throw refuse(field, 'names an ssh user starting with "-", which ssh would read as an option');
    if (kind !== 'ssh' || !USER.test(user)) throw refuse(field, 'must not embed credentials (user info before "@"); send them as repository credentials');
  }
  const port = /^(.*?)(?::(\d{1,5}))?$/.exec(rest) as RegExpExecArray;
  const host = port[1] ?? '';
  if (port[2] !== undefined && Number(port[2]) > 65535) throw refuse(field, 'has a port above 65535');
  if (host === '') throw refuse(field, 'names no host');
  if (!HOST_NAME.test(host) && !IPV6.test(host))
    throw refuse(field, 'has a host git would read differently (letters, digits, "-" and "." only, or a bracketed IPv6 address)');
  let whatwg: URL;
  try {
    whatwg = new URL(value);
  } catch {
    throw refuse(field, `is not a valid URL; ${SUPPORTED}`);
  }
  // 0x7f.1 or 2130706433 are 127.0.0.1 to WHATWG and to libc, and a different name to a plain reading.
  if (whatwg.hostname.toLowerCase() !== host.toLowerCase())
    throw refuse(field, 'has a host that URL parsers disagree on; write the host name or address in its usual form');
  return { host: host.toLowerCase().replace(/^\[|\]$/g, ''), ...(user === undefined ? {} : { user }) };
}

/**
 * Reads a repository URL the way git will, without looking at any policy.
 *
 * @throws ValidationError (field `field`) for anything git would read in another
 *   way, run a helper for, or take as an option; the message never repeats the URL
 */
export function parseRepositoryUrl(value: string, field = 'url'): RemoteUrl {
  if (value.length === 0) throw refuse(field, 'is empty');
  if (value.length > MAX_LENGTH) throw refuse(field, `must be at most ${MAX_LENGTH} characters`);
  // Whitespace and control characters would smuggle options or headers; a
  // backslash is a path separator to WHATWG and part of the host to curl.
  if ([...value].some((char) => char <= ' ' || char === '\x7f')) throw refuse(field, 'contains whitespace or control characters');
  if (value.includes('\\')) throw refuse(field, 'contains a backslash');
  if (value.startsWith('-')) throw refuse(field, `must not start with "-"; ${SUPPORTED}`);
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(value)) throw refuse(field, `uses a git remote helper ("<transport>::", e.g. ext::); ${SUPPORTED}`);

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value);
  if (scheme) {
    // git picks the transport by the literal scheme: HTTPS:// would look for a "git-remote-HTTPS" helper.
    const kind = SCHEMES[scheme[1] as string];
    if (kind === undefined) throw refuse(field, `uses an unsupported scheme; ${SUPPORTED}`);
    const afterScheme = value.slice(scheme[0].length);
    if (/[?#]/.test(afterScheme)) throw refuse(field, 'must not have a query or fragment');
    const slash = afterScheme.indexOf('/');
    const authority = slash === -1 ? afterScheme : afterScheme.slice(0, slash);
    const path = slash === -1 ? '' : afterScheme.slice(slash);
    if (kind === 'file') {
      // git strips "file://" and uses the rest as the path: a host would become a relative path.
      if (authority !== '') throw refuse(field, 'file URLs must name an absolute path (file:///path), not a host');
      const local = checkLocalPath(path, field);
      return { kind, url: value, path: local, display: value };
    }
    if (path === '' || path === '/') throw refuse(field, 'names no repository path');
    if (!URL_PATH.test(path) || path.includes('//')) throw refuse(field, 'has a path with characters git may read differently');
    if (movesAcrossSegments(path)) throw refuse(field, DOT_SEGMENT);
    const { host } = checkAuthority(authority, kind, value, field);
    const hostPort = authority.slice(authority.lastIndexOf('@') + 1).toLowerCase();
    const display = `${kind}://${hostPort}${path}`;
    return kind === 'https' || kind === 'http' ? { kind, url: value, host, origin: `${kind}://${hostPort}/`, display } : { kind, url: value, host, display };
  }

  if (value.startsWith('/')) {
    const local = checkLocalPath(value, field);
    return { kind: 'file', url: pathToFileURL(local).href, path: local, display: local };
  }

  // git reads "[user@]host:path" as ssh when a colon comes before any slash; so
  // "file:etc" and "https:host/x" are ssh to hosts "file" and "https".
  // "user:password@host:path" would read as host "user": refuse it as the credential it is.
  if (/^[^/@:]+:[^/@]*@/.test(value)) throw refuse(field, 'must not embed credentials (user:password@); send them as repository credentials');
  const colon = value.indexOf(':');
  const firstSlash = value.indexOf('/');
  if (colon > 0 && (firstSlash === -1 || colon < firstSlash)) {
    const at = value.slice(0, colon).lastIndexOf('@');
    const user = at === -1 ? undefined : value.slice(0, at);
    const host = value.slice(at + 1, colon);
    const path = value.slice(colon + 1);
    if (user !== undefined && !USER.test(user)) throw refuse(field, 'must not embed credentials (user:password@); send them as repository credentials');
    if (/^(https?|ssh|git|file)$/i.test(host)) throw refuse(field, `looks like a URL without "//"; git would read it as ssh to host "${host}"; ${SUPPORTED}`);
    if (!HOST_NAME.test(host) && !IPV6.test(host)) throw refuse(field, 'is not a supported repository address');
    if (path === '' || path.startsWith('-') || !/^[A-Za-z0-9._~+,=@/-]+$/.test(path)) throw refuse(field, 'names no usable repository path after ":"');
    if (movesAcrossSegments(path)) throw refuse(field, DOT_SEGMENT);
    return { kind: 'ssh', url: value, host: host.toLowerCase().replace(/^\[|\]$/g, ''), display: `${user === undefined ? '' : `${user}@`}${host}:${path}` };
  }
  throw refuse(field, `is not a supported repository URL (a relative path is not accepted); ${SUPPORTED}`);
}

/** The absolute path a configured local repository (path or file:// URL) stands for. */
function localPathOf(entry: string): string | undefined {
  try {
    const parsed = parseRepositoryUrl(entry);
    return parsed.kind === 'file' ? (parsed.path as string).replace(/\/+$/, '') : undefined;
  } catch {
    return undefined;
  }
}

function onAllowList(remote: RemoteUrl, allowList: readonly string[]): boolean {
  return allowList.some((entry) => {
    const local = localPathOf(entry);
    if (local !== undefined) return remote.kind === 'file' && remote.path === local;
    return remote.url === entry || (entry.endsWith('/') && remote.url.startsWith(entry));
  });
}

/**
 * Reads a repository URL the way git will and checks it against `policy`.
 *
 * @throws ValidationError (field `field`); messages say which rule refused the
 *   URL and never whether a local path exists
 */
export function checkRepositoryUrl(value: string, policy: RepositoryUrlPolicy, field = 'url'): RemoteUrl {
  const remote = parseRepositoryUrl(value, field);
  if (policy.allowList !== undefined && policy.allowList.length > 0) {
    if (onAllowList(remote, policy.allowList)) return remote;
    throw refuse(field, 'is not one of the repositories this service is allowed to use (ALLOWED_REPOSITORY_URLS)');
  }
  if (remote.kind === 'ssh' && !remote.url.includes('://') && !policy.scp) {
    throw refuse(field, 'scp-style host:path addresses are not accepted here; write ssh://host/path');
  }
  if (remote.kind === 'http' || remote.kind === 'git') {
    if (policy.plainTransports === 'never') throw refuse(field, `${remote.kind}:// is not accepted here; use https:// or ssh://`);
    if (policy.plainTransports === 'loopback' && !isLoopbackHost(remote.host))
      throw refuse(field, `${remote.kind}:// is only accepted to a loopback host; use https:// or ssh://`);
  }
  if (remote.kind === 'file' && policy.localRepositories !== 'any') {
    const allowed = policy.localRepositories.map(localPathOf);
    if (!allowed.includes((remote.path as string).replace(/\/+$/, ''))) {
      // The same answer whether or not the path exists: no probing of the host's file system.
      throw refuse(field, 'is a local repository this service is not configured to use');
    }
  }
  return remote;
}
