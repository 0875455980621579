/**
 * Publishes a Helm chart directory to an OCI registry the way `helm package` +
 * `helm push` do (see helm-chart-artifact.ts), for machines without helm:
 * `npm run publish:chart -- --chart charts/gitops-scaffolder --to oci://registry/charts`.
 *
 * The chart's files are read from disk: regular files only (a symbolic link is
 * refused, as `helm package` would follow it out of the chart), minus the
 * patterns of `.helmignore` (`*`, `?` and a trailing `/` for directories).
 */
import { readFile, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { ValidationError } from '../errors.js';
import type { ArtifactFile } from './artifact-layer.js';
import { OCI_MANIFEST_MEDIA_TYPE } from './flux-artifact.js';
import { buildHelmChartArtifact } from './helm-chart-artifact.js';
import { RegistryClient, type RegistryCredentials } from './registry-client.js';

/** What to publish, and where. */
export interface PublishHelmChartOptions {
  readonly chartDir: string;
  /** The repository the chart goes under, e.g. `oci://ghcr.io/kubeopera/charts`: the chart is pushed to `<that>/<name>:<version>`, as `helm push` does. */
  readonly to: string;
  /** @default now */
  readonly created?: Date;
  readonly credentials?: RegistryCredentials;
  readonly insecure?: boolean;
  readonly signal?: AbortSignal;
}

/** What was pushed. */
export interface PublishHelmChartResult {
  /** `registry/repository/name`. */
  readonly repository: string;
  readonly tag: string;
  readonly digest: string;
  readonly files: number;
}

/** A `.helmignore` line as a test on chart-relative paths. */
function ignoreRule(pattern: string): (path: string, isDirectory: boolean) => boolean {
  const directoryOnly = pattern.endsWith('/');
  const body = directoryOnly ? pattern.slice(0, -1) : pattern;
  const regex = new RegExp(
    `^${body
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')}$`,
  );
  // A pattern without a slash matches a name at any depth, as in .gitignore.
  const anyDepth = !body.includes('/');
  return (path, isDirectory) => (!directoryOnly || isDirectory) && (regex.test(path) || (anyDepth && regex.test(path.split('/').at(-1) ?? '')));
}

/** The chart's files, chart-relative, sorted, minus .helmignore's patterns. */
export async function readChartFiles(chartDir: string): Promise<ArtifactFile[]> {
  const ignore = await readFile(join(chartDir, '.helmignore'), 'utf8').catch(() => '');
  const rules = ignore
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map(ignoreRule);
  const ignored = (path: string, isDirectory: boolean): boolean => rules.some((rule) => rule(path, isDirectory));
  const files: ArtifactFile[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(dir, entry.name);
      const path = relative(chartDir, full).split(sep).join('/');
      if (ignored(path, entry.isDirectory())) continue;
      if (entry.isSymbolicLink()) throw new ValidationError([{ field: path, message: 'is a symbolic link: a chart holds regular files only' }]);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) files.push({ path, content: await readFile(full) });
    }
  };
  await walk(chartDir);
  return files;
}

/**
 * Packs and pushes the chart.
 * @throws ValidationError when the directory is not a valid chart or `to` is not an OCI repository reference
 */
export async function publishHelmChart(options: PublishHelmChartOptions): Promise<PublishHelmChartResult> {
  // The client parses (and validates) the reference; what it keeps is registry and repository only.
  const base = new RegistryClient({ reference: options.to });
  if (options.to.replace(/^oci:\/\//i, '').toLowerCase() !== `${base.registry}/${base.repository}`.toLowerCase()) {
    throw new ValidationError([{ field: 'to', message: 'must name a repository without tag or digest: the chart version is the tag' }]);
  }
  const files = await readChartFiles(options.chartDir);
  const artifact = await buildHelmChartArtifact({ files, created: options.created ?? new Date() });
  const name = (JSON.parse(artifact.config.content.toString('utf8')) as { name: string }).name;
  const client = new RegistryClient({
    reference: `oci://${base.registry}/${base.repository}/${name}`,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.insecure !== undefined ? { insecure: options.insecure } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  await client.pushBlob(artifact.config.content, artifact.config.descriptor.digest);
  await client.pushBlob(artifact.layer.content, artifact.layer.descriptor.digest);
  await client.putManifest(artifact.tag, artifact.manifestBytes, OCI_MANIFEST_MEDIA_TYPE);
  return { repository: `${client.registry}/${client.repository}`, tag: artifact.tag, digest: artifact.digest, files: files.length };
}
