/**
 * A patch whose `target` selects nothing: kustomize skips it without a word
 * (kubernetes-sigs/kustomize#4379), where a strategic-merge patch naming an
 * object the build does not have fails the build. A base object renamed under
 * an overlay would leave the overlay's replicas, resources or hostnames
 * unpatched, and the build would still pass.
 *
 * Checked against the objects the directory builds to, for the patches of the
 * built kustomization and of the components it includes (recursively): those
 * patches select among objects whose names and kinds reach the output as they
 * were selected, unless something in that chain renames or deletes objects
 * (namePrefix, nameSuffix, namespace, replacements, a patch that writes
 * metadata.name or metadata.namespace, `$patch: delete`); then nothing is said.
 * Selectors are read as kustomize reads them (each field a regular expression
 * anchored at both ends; an empty field matches anything); a field written in
 * regular-expression syntax JavaScript may read otherwise than Go, a label or
 * annotation selector, or a namespace asked of an object that sets none (whose
 * scope kustomize decides), leaves the patch unjudged. Silence, never a false
 * finding: test/integration/patch-targets-kubectl.test.ts holds the verdicts to
 * kubectl's own on generated selectors.
 */
import { posix } from 'node:path';
import type { RepoReader } from '../gitops/repo-reader.js';
import { groupOf, metadataOf } from './applied-object.js';
import { sharedYamlReading } from '../gitops/shared-yaml-reading.js';
import { isRecord } from '../model/is-record.js';
import type { Finding } from './finding.js';
import { KUSTOMIZATION_FILES } from './kustomization-paths.js';

/** A kustomization of the chain, with the repository path of its file. */
interface ChainLink {
  readonly file: string;
  readonly dir: string;
  readonly value: Record<string, unknown>;
}

/** A patch with a target, and where it was declared. */
interface TargetedPatch {
  readonly file: string;
  readonly what: string;
  readonly target: Record<string, unknown>;
}

/** Fields that rename, move or drop objects after patches selected them. */
const RENAMING_FIELDS = ['namePrefix', 'nameSuffix', 'namespace', 'replacements'] as const;

/** The selector fields matched against an object's id. */
const ID_FIELDS = ['group', 'version', 'kind', 'name', 'namespace'] as const;

/** Regular-expression text both engines read alike: literals, `.`, alternation, groups, classes, repetition. */
const PORTABLE_PATTERN = /^(?:[A-Za-z0-9_.\-|*+?()[\]^$]|\\\.)*$/;

/** The first document of the kustomization file in `dir`, with the file's path; undefined when there is none or it is no mapping. */
async function kustomizationIn(reader: RepoReader, dir: string): Promise<ChainLink | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const file = dir === '' ? name : `${dir}/${name}`;
    const text = await reader.read(file).catch(() => undefined);
    if (text === undefined) continue;
    const [first] = sharedYamlReading(text);
    return first !== undefined && first.thrown === undefined && isRecord(first.value) ? { file, dir, value: first.value } : undefined;
  }
  return undefined;
}

/** The kustomization at `dir` and every component it includes, depth first; undefined when a component cannot be read. */
async function chainOf(reader: RepoReader, dir: string): Promise<ChainLink[] | undefined> {
  const chain: ChainLink[] = [];
  const seen = new Set<string>();
  const visit = async (at: string): Promise<boolean> => {
    if (seen.has(at)) return true;
    seen.add(at);
    const link = await kustomizationIn(reader, at);
    if (link === undefined) return false;
    chain.push(link);
    const components = link.value.components;
    if (components === undefined) return true;
    if (!Array.isArray(components)) return false;
    for (const component of components) {
      if (typeof component !== 'string') return false;
      const path = posix.normalize(posix.join(at, component));
      if (path === '..' || path.startsWith('../') || !(await visit(path === '.' ? '' : path))) return false;
    }
    return true;
  };
  return (await visit(dir)) ? chain : undefined;
}

/** The patches of one kustomization: each one's text (inline or read from its file) and its target, if any. */
async function patchesOf(reader: RepoReader, link: ChainLink): Promise<{ text: string | undefined; what: string; target: unknown }[]> {
  const patches: { text: string | undefined; what: string; target: unknown }[] = [];
  for (const key of ['patches', 'patchesJson6902', 'patchesStrategicMerge'] as const) {
    const list = link.value[key];
    if (!Array.isArray(list)) continue;
    for (const [index, item] of list.entries()) {
      if (typeof item === 'string') {
        // patchesStrategicMerge: a file or an inline patch.
        const text = item.includes('\n') ? item : await readBeside(reader, link.dir, item);
        patches.push({ text, what: `${key}[${index}]`, target: undefined });
        continue;
      }
      if (!isRecord(item)) continue;
      const path = typeof item.path === 'string' ? item.path : undefined;
      const text = typeof item.patch === 'string' ? item.patch : path !== undefined ? await readBeside(reader, link.dir, path) : undefined;
      patches.push({ text, what: path ?? `${key}[${index}] (inline)`, target: item.target });
    }
  }
  return patches;
}

/** JSON patch operations that write where they point. */
const WRITING_OPS = new Set(['add', 'replace', 'remove', 'move', 'copy']);

/** Whether a JSON patch path is an object's name, namespace or whole metadata. */
const IDENTITY_PATH = /^\/metadata(?:\/(?:name|namespace))?$/;

/**
 * Whether a patch may rename, move or delete objects: then the output's ids are
 * not the ones patches selected. A JSON patch writing /metadata/name,
 * /metadata/namespace or /metadata whole (or moving from there); a
 * strategic-merge patch with a `$patch` directive (delete, replace); anything
 * that cannot be read.
 */
function mayRenameOrDelete(text: string | undefined): boolean {
  if (text === undefined || text.includes('$patch')) return true;
  for (const { value, thrown } of sharedYamlReading(text)) {
    if (thrown !== undefined) return true;
    if (!Array.isArray(value)) continue;
    for (const op of value) {
      if (!isRecord(op)) return true;
      const writes = typeof op.op === 'string' && WRITING_OPS.has(op.op);
      if (writes && [op.path, op.from].some((path) => typeof path === 'string' && IDENTITY_PATH.test(path))) return true;
    }
  }
  return false;
}

/** A file the kustomization at `dir` names, or undefined where the reader has none (or the path leaves the repository). */
async function readBeside(reader: RepoReader, dir: string, path: string): Promise<string | undefined> {
  const file = posix.normalize(posix.join(dir, path));
  if (posix.isAbsolute(path) || file === '..' || file.startsWith('../')) return undefined;
  return reader.read(file).catch(() => undefined);
}

/** The anchored expression of one selector field, null for a field that matches anything, undefined when it cannot be judged here. */
function fieldExpression(value: unknown): RegExp | null | undefined {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !PORTABLE_PATTERN.test(value)) return undefined;
  try {
    return new RegExp(`^(?:${value})$`);
  } catch {
    return undefined;
  }
}

/** An object's id as a selector sees it; the generated name's hash suffix is also tried, as kustomize selects a generated object by its own name. */
function idOf(object: Record<string, unknown>): { group: string; version: string; kind: string; names: string[]; namespace: string | undefined } {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const metadata = metadataOf(object);
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const namespace = typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : undefined;
  const unsuffixed = name.replace(/-[a-z0-9]{10}$/, '');
  return {
    group: groupOf(apiVersion),
    version: apiVersion.slice(apiVersion.indexOf('/') + 1),
    kind: typeof object.kind === 'string' ? object.kind : '',
    names: unsuffixed === name ? [name] : [name, unsuffixed],
    namespace,
  };
}

/** Whether `target` selects an object of `objects`: true, false, or undefined when it cannot be judged here. */
function selects(target: Record<string, unknown>, objects: readonly Record<string, unknown>[]): boolean | undefined {
  if (target.labelSelector !== undefined || target.annotationSelector !== undefined) return undefined;
  const expressions: Partial<Record<(typeof ID_FIELDS)[number], RegExp | null>> = {};
  for (const field of ID_FIELDS) {
    const expression = fieldExpression(target[field]);
    if (expression === undefined) return undefined;
    expressions[field] = expression;
  }
  const { group, version, kind, name, namespace } = expressions;
  let undecided = false;
  for (const object of objects) {
    const id = idOf(object);
    if (group && !group.test(id.group)) continue;
    if (version && !version.test(id.version)) continue;
    if (kind && !kind.test(id.kind)) continue;
    if (name && !id.names.some((n) => name.test(n))) continue;
    if (namespace) {
      // An object without a namespace is in `default` or cluster-scoped, as kustomize knows its kind: not judged here.
      if (id.namespace === undefined) {
        undecided = true;
        continue;
      }
      if (!namespace.test(id.namespace)) continue;
    }
    return true;
  }
  return undecided ? undefined : false;
}

/** `kind namespace/name` of a target, for a finding. */
function describeTarget(target: Record<string, unknown>): string {
  const text = (field: string): string => (typeof target[field] === 'string' ? (target[field] as string) : '');
  const groupVersion = [text('group'), text('version')].filter((part) => part !== '').join('/');
  const kind = text('kind') || 'any kind';
  const name = text('name') || '*';
  return `${kind}${groupVersion !== '' ? ` (${groupVersion})` : ''} ${text('namespace') !== '' ? `${text('namespace')}/` : ''}${name}`;
}

/**
 * Findings for the targeted patches of the kustomization at `dir` and its
 * components that select no object of `built`, the directory's build output.
 */
export async function unmatchedPatchTargets(reader: RepoReader, dir: string, built: readonly Record<string, unknown>[]): Promise<Finding[]> {
  const chain = await chainOf(reader, dir);
  if (chain === undefined) return [];
  const targeted: TargetedPatch[] = [];
  for (const link of chain) {
    if (RENAMING_FIELDS.some((field) => link.value[field] !== undefined && link.value[field] !== '')) return [];
    for (const patch of await patchesOf(reader, link)) {
      if (mayRenameOrDelete(patch.text)) return [];
      if (isRecord(patch.target)) targeted.push({ file: link.file, what: patch.what, target: patch.target });
    }
  }
  const findings: Finding[] = [];
  for (const patch of targeted) {
    if (selects(patch.target, built) !== false) continue;
    findings.push({
      file: patch.file,
      message: `patch ${patch.what} targets ${describeTarget(patch.target)}, which ${dir === '' ? 'the repository root' : dir} does not build: kustomize skips a patch whose target selects nothing, without an error`,
    });
  }
  return findings;
}
