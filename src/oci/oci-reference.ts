/** OCI artifact references and tags, checked the way the distribution spec defines them. */
import { ValidationError } from '../errors.js';

/** A parsed artifact reference: `[oci://]host[:port]/path[:tag][@sha256:…]`. */
export interface OciReference {
  /** `host[:port]`, the host lowercased. */
  readonly registry: string;
  /** The repository name inside the registry, e.g. `platform` or `org/platform`. */
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

// https://github.com/opencontainers/distribution-spec/blob/main/spec.md#pulling-manifests
const REPOSITORY = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

function invalid(field: string, message: string): ValidationError {
  return new ValidationError([{ field, message }]);
}

/**
 * Checks a content digest: `sha256:<64 lowercase hex>`.
 *
 * @returns the digest, unchanged
 * @throws ValidationError otherwise
 */
export function assertOciDigest(digest: string, field = 'digest'): string {
  if (!DIGEST.test(digest)) throw invalid(field, 'must be sha256:<64 lowercase hex>');
  return digest;
}

/**
 * Checks an OCI tag: `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`.
 *
 * @returns the tag, unchanged
 * @throws ValidationError otherwise
 */
export function assertOciTag(tag: string, field = 'tag'): string {
  if (!TAG.test(tag))
    throw invalid(field, `${JSON.stringify(tag)} is not a valid tag (letters, digits, '_', '.', '-'; at most 128; not starting with '.' or '-')`);
  return tag;
}

/**
 * Parses `oci://host[:port]/path[:tag][@sha256:<hex>]`, or the same without
 * `oci://`. The first component must be a registry host: it has a dot or a
 * port, or is `localhost` or an IPv6 literal (there is no implied Docker Hub).
 *
 * @throws ValidationError naming what is wrong; the input is not echoed, since
 *   it could carry credentials (which a reference must not)
 */
export function parseOciReference(input: string): OciReference {
  const field = 'reference';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(input);
  if (scheme && (scheme[1] as string).toLowerCase() !== 'oci') throw invalid(field, 'must be oci://<host>/<repository>[:tag] or <host>/<repository>[:tag]');
  const rest = scheme ? input.slice(scheme[0].length) : input;
  const slash = rest.indexOf('/');
  if (slash <= 0) throw invalid(field, 'must name a registry host and a repository: oci://<host>[:port]/<repository>[:tag]');
  const host = rest.slice(0, slash);
  if (host.includes('@')) throw invalid(field, 'must not carry credentials; pass them separately');
  const hostMatch = HOST.exec(host);
  const isHost = hostMatch !== null && (host.includes('.') || host.includes(':') || host.toLowerCase() === 'localhost');
  if (!isHost) throw invalid(field, `${JSON.stringify(host)} is not a registry host (a name with a dot or a port, localhost, or an IP address)`);
  const port = hostMatch[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw invalid(field, `port ${port} is out of range`);

  let path = rest.slice(slash + 1);
  let digest: string | undefined;
  const at = path.indexOf('@');
  if (at !== -1) {
    digest = path.slice(at + 1);
    path = path.slice(0, at);
    if (!DIGEST.test(digest)) throw invalid(field, 'the digest must be sha256:<64 lowercase hex>');
  }
  let tag: string | undefined;
  const colon = path.lastIndexOf(':');
  if (colon > path.lastIndexOf('/')) {
    tag = assertOciTag(path.slice(colon + 1), field);
    path = path.slice(0, colon);
  }
  if (!REPOSITORY.test(path)) {
    throw invalid(
      field,
      `repository ${JSON.stringify(path)} is not valid (lowercase letters, digits and separators '.', '_', '__', '-', in '/'-separated components)`,
    );
  }
  const registry = host.toLowerCase();
  if (registry.length + 1 + path.length > 255) throw invalid(field, 'registry and repository together exceed 255 characters');
  return { registry, repository: path, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}
