/**
 * The OCI image manifest of a Flux artifact, in the format `flux push artifact`
 * produces and source-controller's OCIRepository consumes
 * (https://github.com/fluxcd/pkg/blob/main/oci/push.go, oci/constants.go):
 *
 * - manifest media type `application/vnd.oci.image.manifest.v1+json`, schemaVersion 2;
 * - a config descriptor with media type `application/vnd.cncf.flux.config.v1+json`
 *   (source-controller never reads the config; it is the empty JSON object `{}`);
 * - one layer, `application/vnd.cncf.flux.content.v1.tar+gzip`, which
 *   OCIRepository selects by default (the first layer) and extracts;
 * - the OpenContainers annotations `org.opencontainers.image.created` (RFC 3339),
 *   `.source` (the Git URL) and `.revision` in Flux's RFC-0005 form
 *   `<branch>@sha1:<commit>`, which OCIRepository copies into its artifact's metadata.
 *
 * Pure: no I/O. The manifest is serialized once, compactly with sorted
 * annotation keys (as Go's encoding/json does), and its digest is that of those bytes.
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';

/** Media type of an OCI image manifest. */
export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
/** Media type of a Flux artifact's config blob. */
export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
/** Media type of a Flux artifact's content layer (gzip-compressed tarball). */
export const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
/** OpenContainers annotation: when the artifact was built (RFC 3339). */
export const CREATED_ANNOTATION = 'org.opencontainers.image.created';
/** OpenContainers annotation: the upstream source (Git URL). */
export const SOURCE_ANNOTATION = 'org.opencontainers.image.source';
/** OpenContainers annotation: the upstream revision (`<branch>@sha1:<commit>`). */
export const REVISION_ANNOTATION = 'org.opencontainers.image.revision';

/** An OCI content descriptor. */
export interface OciDescriptor {
  readonly mediaType: string;
  /** `sha256:<64 hex>`. */
  readonly digest: string;
  readonly size: number;
}

/** An OCI image manifest as Flux artifacts use it. */
export interface OciImageManifest {
  readonly schemaVersion: 2;
  readonly mediaType: typeof OCI_MANIFEST_MEDIA_TYPE;
  readonly config: OciDescriptor;
  readonly layers: readonly OciDescriptor[];
  readonly annotations: Readonly<Record<string, string>>;
}

/** A blob to upload: its bytes and its descriptor. */
export interface OciBlob {
  readonly descriptor: OciDescriptor;
  readonly content: Buffer;
}

/** Everything to push for one Flux artifact. */
export interface FluxArtifact {
  readonly manifest: OciImageManifest;
  /** The exact bytes to PUT as the manifest; {@link FluxArtifact.digest} is their sha256. */
  readonly manifestBytes: Buffer;
  /** The manifest digest, `sha256:<hex>`: what OCIRepository resolves a tag to. */
  readonly digest: string;
  readonly config: OciBlob;
  readonly layer: OciBlob;
}

/** What the artifact is built from. */
export interface FluxArtifactInput {
  /** The content layer, from `packTree`. */
  readonly layer: Buffer;
  /** `org.opencontainers.image.revision`, see {@link fluxRevision}. */
  readonly revision: string;
  /** `org.opencontainers.image.created`; whole seconds are kept. */
  readonly created: Date;
  /** `org.opencontainers.image.source`; omitted when not given. Must not carry credentials. */
  readonly source?: string;
}

/** `sha256:<hex>` of bytes: an OCI content digest. */
export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** RFC 3339 in UTC without fractional seconds, like Go's `time.RFC3339`. */
export function rfc3339(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new ValidationError([{ field: 'created', message: 'is not a valid time' }]);
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Flux's revision string for a commit (RFC-0005): `<ref>@sha1:<commit>`, or
 * `sha1:<commit>` when there is no branch (detached HEAD). A 64-hex commit
 * (a SHA-256 repository) gets `sha256:`.
 *
 * @throws ValidationError when `commit` is not a full hexadecimal object name
 */
export function fluxRevision(commit: string, branch?: string): string {
  const algorithm = /^[0-9a-f]{40}$/.test(commit) ? 'sha1' : /^[0-9a-f]{64}$/.test(commit) ? 'sha256' : undefined;
  if (!algorithm) throw new ValidationError([{ field: 'commit', message: 'must be a full lowercase hexadecimal commit id' }]);
  if (branch !== undefined && (branch.length === 0 || /\s/.test(branch))) {
    throw new ValidationError([{ field: 'branch', message: `${JSON.stringify(branch)} is not a usable branch name` }]);
  }
  return branch === undefined ? `${algorithm}:${commit}` : `${branch}@${algorithm}:${commit}`;
}

/**
 * Builds the config blob, layer descriptor and manifest of a Flux artifact.
 * Deterministic: the same input gives the same manifest bytes and digest.
 *
 * @throws ValidationError when `created` is not a valid time, or `revision` is empty
 */
export function buildFluxArtifact(input: FluxArtifactInput): FluxArtifact {
  if (input.revision.length === 0) throw new ValidationError([{ field: 'revision', message: 'is empty' }]);
  const configContent = Buffer.from('{}', 'utf8');
  const config: OciBlob = {
    descriptor: { mediaType: FLUX_CONFIG_MEDIA_TYPE, digest: sha256(configContent), size: configContent.length },
    content: configContent,
  };
  const layer: OciBlob = {
    descriptor: { mediaType: FLUX_CONTENT_MEDIA_TYPE, digest: sha256(input.layer), size: input.layer.length },
    content: input.layer,
  };
  // Keys in sorted order: the serialization is part of the digest.
  const annotations: Record<string, string> = { [CREATED_ANNOTATION]: rfc3339(input.created), [REVISION_ANNOTATION]: input.revision };
  if (input.source !== undefined && input.source.length > 0) annotations[SOURCE_ANNOTATION] = input.source;
  const sorted = Object.fromEntries(Object.entries(annotations).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const manifest: OciImageManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    config: config.descriptor,
    layers: [layer.descriptor],
    annotations: sorted,
  };
  const manifestBytes = Buffer.from(JSON.stringify(manifest), 'utf8');
  return { manifest, manifestBytes, digest: sha256(manifestBytes), config, layer };
}
