/**
 * The overlay step of a render: each included layer's overlay gets the
 * components generated from its objects (ingress hosts, ExternalDNS identity)
 * and its sealed credentials, and its kustomization.yaml lists exactly those.
 */
import { isSeq, parseDocument, type Document, YAMLSeq } from 'yaml';
import { ValidationError } from '../errors.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import { rewriteIdentity } from './cluster-identity.js';
import { renderIdentityComponent } from './external-dns-identity.js';
import { renderHostsComponent } from './ingress-hosts.js';
import { layerResourceObjects } from './layer-resources.js';
import type { PlannedLayer } from './planned-layers.js';
import type { CredentialSpec } from './platform-descriptor.js';
import type { ReferenceEnvironment } from './reference-environment.js';
import type { RepoReader } from './repo-reader.js';
import { documentToYaml } from './yaml.js';

/** The kinds the generated components derive from: Ingresses (hosts/) and the external-dns HelmRelease (identity/). */
const COMPONENT_SOURCE_KINDS = ['Ingress', 'HelmRelease'] as const;

/** Adds `value` to the list at `key` of a YAML map document if it is not there yet. */
function ensureListEntry(doc: Document, key: string, value: string): void {
  const existing = doc.get(key);
  if (isSeq(existing)) {
    if (!existing.items.some((item) => String((item as { value?: unknown }).value ?? item) === value)) existing.add(value);
    return;
  }
  const seq = new YAMLSeq();
  seq.add(value);
  doc.set(key, seq);
}

/** Removes `value` from the list at `key` of a YAML map document, and the list if it becomes empty. */
function removeListEntry(doc: Document, key: string, value: string): void {
  const existing = doc.get(key);
  if (!isSeq(existing)) return;
  existing.items = existing.items.filter(
    (item) =>
      String((item as { value?: unknown }).value ?? item)
        .replace(/^\.\//, '')
        .replace(/\/+$/, '') !== value,
  );
  if (existing.items.length === 0) doc.delete(key);
}

/**
 * A reader that serves the reference environment's files as they are carried
 * over (identity rewritten), so what the generator derives from an object in
 * the reference (a host patch's `test` value) matches the file written.
 */
function carriedOverReader(reader: RepoReader, reference: ReferenceEnvironment, cluster: ClusterSpec): RepoReader {
  const prefix = `${reference.root}/`;
  return {
    list: (dir) => reader.list(dir),
    isDirectory: (path) => reader.isDirectory(path),
    async read(path) {
      const text = await reader.read(path);
      return text !== undefined && path.startsWith(prefix) ? rewriteIdentity(text, reference.identity, cluster) : text;
    },
  };
}

/** Inputs of {@link renderLayerOverlays}. */
export interface LayerOverlaysInput {
  readonly reader: RepoReader;
  readonly reference: ReferenceEnvironment;
  readonly cluster: ClusterSpec;
  readonly included: readonly PlannedLayer[];
  /** The credentials this render seals. */
  readonly credentials: readonly CredentialSpec[];
  /** A carried-over file by its path relative to the cluster directory. */
  readonly carriedOver: (rel: string) => string | undefined;
}

/**
 * The generated components of every included overlay and its rewritten
 * kustomization.yaml, as [path relative to the cluster directory, content].
 * @throws ValidationError when an overlay has no kustomization.yaml
 */
export async function renderLayerOverlays(input: LayerOverlaysInput): Promise<[string, string][]> {
  const { reference, cluster } = input;
  const files: [string, string][] = [];
  for (const layer of input.included) {
    if (layer.dir === undefined) continue;
    const kustomizationRel = `${layer.dir}/kustomization.yaml`;
    const text = reference.files.get(kustomizationRel);
    if (text === undefined) {
      throw new ValidationError([{ field: `${reference.root}/${kustomizationRel}`, message: `layer ${layer.name} has no kustomization.yaml` }]);
    }
    const objects = await layerResourceObjects(
      carriedOverReader(input.reader, reference, cluster),
      `${reference.root}/${layer.dir}`,
      text,
      COMPONENT_SOURCE_KINDS,
    );
    const doc = parseDocument(input.carriedOver(kustomizationRel)!);
    const components = [...renderHostsComponent(objects, cluster.domain), ...renderIdentityComponent(objects, cluster)];
    for (const [rel, content] of components) files.push([`${layer.dir}/${rel}`, content]);
    // The generated directories are listed exactly when they are generated: a
    // reference entry for one this cluster does not get would break the build.
    const generated = (dir: string) => components.some(([rel]) => rel.startsWith(`${dir}/`));
    for (const dir of ['hosts', 'identity'] as const) {
      if (generated(dir)) ensureListEntry(doc, 'components', dir);
      else removeListEntry(doc, 'components', dir);
    }
    if (input.credentials.some((c) => c.layer === layer.dir)) ensureListEntry(doc, 'resources', 'sealed');
    else removeListEntry(doc, 'resources', 'sealed');
    files.push([kustomizationRel, documentToYaml(doc)]);
  }
  return files;
}
