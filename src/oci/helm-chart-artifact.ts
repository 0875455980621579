/**
 * A Helm chart as an OCI artifact, the way `helm push` stores it (Helm 3.8+,
 * HIP-0006): an OCI image manifest whose config blob is the chart's metadata
 * (Chart.yaml as JSON, media type `application/vnd.cncf.helm.config.v1+json`)
 * and whose one layer is the packaged chart (`helm package`'s tarball: every
 * file under a `<name>/` directory, `application/vnd.cncf.helm.chart.content.v1.tar+gzip`),
 * tagged with the chart's version. `helm pull`/`helm install oci://…` and Flux's
 * HelmRepository of type oci read it.
 *
 * Deterministic like the Flux artifact: the same chart and time give the same digest.
 */
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { packTree, type ArtifactFile } from './artifact-layer.js';
import { OCI_MANIFEST_MEDIA_TYPE, rfc3339, sha256, type OciBlob, type OciImageManifest } from './flux-artifact.js';

export const HELM_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.helm.config.v1+json';
export const HELM_CHART_MEDIA_TYPE = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';

/** The Chart.yaml fields carried in the config blob (Helm's chart.Metadata, JSON names). */
export interface HelmChartMetadata {
  readonly apiVersion: string;
  readonly name: string;
  readonly version: string;
  readonly appVersion?: string;
  readonly description?: string;
  readonly type?: string;
  readonly kubeVersion?: string;
  readonly home?: string;
  readonly keywords?: readonly string[];
}

/** Everything to push for one chart version. */
export interface HelmChartArtifact {
  readonly manifest: OciImageManifest;
  readonly manifestBytes: Buffer;
  readonly digest: string;
  readonly config: OciBlob;
  readonly layer: OciBlob;
  /** The tag Helm looks the version up by: the version, `+` written `_` (OCI tags have no `+`). */
  readonly tag: string;
}

// SemVer 2, as Helm requires of a chart version.
const SEMVER = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const CHART_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const TEXT_FIELDS = ['appVersion', 'description', 'type', 'kubeVersion', 'home'] as const;

/**
 * Reads Chart.yaml.
 * @throws ValidationError when it is not an apiVersion v2 chart with a name and a SemVer version
 */
export function helmChartMetadata(chartYaml: string): HelmChartMetadata {
  const raw: unknown = parse(chartYaml);
  const chart = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const issues = [];
  if (chart['apiVersion'] !== 'v2') issues.push({ field: 'Chart.yaml.apiVersion', message: 'must be v2' });
  if (typeof chart['name'] !== 'string' || !CHART_NAME.test(chart['name']))
    issues.push({ field: 'Chart.yaml.name', message: 'must be a lower-case chart name' });
  if (typeof chart['version'] !== 'string' || !SEMVER.test(chart['version']))
    issues.push({ field: 'Chart.yaml.version', message: 'must be a SemVer 2 version' });
  if (issues.length > 0) throw new ValidationError(issues);
  const text = Object.fromEntries(TEXT_FIELDS.filter((k) => typeof chart[k] === 'string').map((k) => [k, chart[k] as string]));
  const keywords = Array.isArray(chart['keywords']) ? chart['keywords'].filter((k): k is string => typeof k === 'string') : undefined;
  return { apiVersion: 'v2', name: chart['name'] as string, version: chart['version'] as string, ...text, ...(keywords === undefined ? {} : { keywords }) };
}

/**
 * Packs the chart's files (paths relative to the chart directory, Chart.yaml
 * among them) and builds the manifest.
 * @throws ValidationError when Chart.yaml is missing or invalid, or `created` is not a time
 */
export async function buildHelmChartArtifact(input: { readonly files: readonly ArtifactFile[]; readonly created: Date }): Promise<HelmChartArtifact> {
  const chartYaml = input.files.find((f) => f.path === 'Chart.yaml');
  if (chartYaml === undefined) throw new ValidationError([{ field: 'Chart.yaml', message: 'is missing: not a chart directory' }]);
  const metadata = helmChartMetadata(Buffer.from(chartYaml.content).toString('utf8'));
  const created = rfc3339(input.created);
  const packed = await packTree(
    input.files.map((f) => ({ ...f, path: `${metadata.name}/${f.path}` })),
    { mtime: input.created },
  );
  const configContent = Buffer.from(JSON.stringify(metadata), 'utf8');
  const config: OciBlob = {
    descriptor: { mediaType: HELM_CONFIG_MEDIA_TYPE, digest: sha256(configContent), size: configContent.length },
    content: configContent,
  };
  const layer: OciBlob = { descriptor: { mediaType: HELM_CHART_MEDIA_TYPE, digest: sha256(packed), size: packed.length }, content: packed };
  // The annotations `helm push` writes; keys sorted, as the serialization is part of the digest.
  const annotations: Record<string, string> = {
    'org.opencontainers.image.created': created,
    ...(metadata.description === undefined ? {} : { 'org.opencontainers.image.description': metadata.description }),
    'org.opencontainers.image.title': metadata.name,
    ...(metadata.home === undefined ? {} : { 'org.opencontainers.image.url': metadata.home }),
    'org.opencontainers.image.version': metadata.version,
  };
  const manifest: OciImageManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    config: config.descriptor,
    layers: [layer.descriptor],
    annotations,
  };
  const manifestBytes = Buffer.from(JSON.stringify(manifest), 'utf8');
  return { manifest, manifestBytes, digest: sha256(manifestBytes), config, layer, tag: metadata.version.replace(/\+/g, '_') };
}
