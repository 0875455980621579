/**
 * The Flux Operator's templating layer of a ResourceSet, checked after Flux's.
 *
 * Two substitutions reach a ResourceSet's objects, in this order: Flux's
 * postBuild substitution of the Kustomization applying the ResourceSet
 * (`${var}`, checked by substitution.ts on the ResourceSet as a whole; an
 * escaped `$${var}` reaches the operator as `${var}`), then the operator's Go
 * template per input set, written `<< inputs.name >>` (delimiters `<<` `>>`).
 * This module reads the second layer on the first one's output: every
 * `<< inputs.x >>` must name an input the ResourceSet's inputs export (a
 * ResourceSetInputProvider's type decides them: a pull request exports id,
 * sha, branch, author and title), the delimiters must balance, and the
 * objects rendered with a sample input set are handed back so verify
 * validates them against their schemas, as the operator's apply would.
 */
import { parse, stringify } from 'yaml';
import { isRecord } from '../model/is-record.js';
import { eachString } from './each-string.js';
import { appliedNamespace, metadataOf, specOf, type AppliedKustomization } from './applied-object.js';
import type { Finding } from './finding.js';
import { objectLabel } from './object-label.js';

const OPERATOR_GROUP = 'fluxcd.controlplane.io/';

/** Inputs every provider exports, by the kind of thing it lists (Flux Operator docs, ResourceSetInputProvider). */
const EXPORTED_INPUTS: readonly { readonly match: RegExp; readonly inputs: readonly string[] }[] = [
  { match: /(PullRequest|MergeRequest)$/, inputs: ['id', 'sha', 'branch', 'author', 'title'] },
  { match: /Branch$/, inputs: ['id', 'sha', 'branch'] },
  { match: /Environment$/, inputs: ['id', 'sha', 'branch', 'env'] },
  { match: /ArtifactTag$|Tag$/, inputs: ['id', 'tag', 'digest', 'sha'] },
  { match: /^Static$/, inputs: ['id'] },
];

/** Whether a provider type lists pull/merge requests (a preview's source). */
export function isRequestProviderType(type: unknown): boolean {
  return typeof type === 'string' && /(PullRequest|MergeRequest)$/.test(type);
}

/** Sample values the rendering check fills in: a request number is all digits, which is what breaks an unquoted string field. */
const SAMPLE: Readonly<Record<string, string>> = {
  id: '42',
  sha: '8f2a0c6d1e4b7a9c3f5e2d1b0a9c8e7f6d5c4b3a',
  branch: 'feature/preview',
  author: 'octocat',
  title: 'Preview this change',
  tag: 'v1.2.3',
  digest: 'sha256:0000000000000000000000000000000000000000000000000000000000000000',
  env: 'preview',
};

/** An object the operator would apply, rendered from a ResourceSet with sample inputs. */
export interface RenderedTemplateObject {
  /** Where the ResourceSet is written (the directory its Kustomization builds). */
  readonly file: string;
  /** `ResourceSet namespace/name`. */
  readonly owner: string;
  readonly object: Record<string, unknown>;
}

/** What {@link checkResourceSetTemplates} found. */
export interface ResourceSetTemplateReport {
  readonly findings: Finding[];
  readonly notes: string[];
  readonly rendered: RenderedTemplateObject[];
}

/** One `<< … >>` action's text, without delimiters and trim markers. */
interface Action {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

const ACTION = /<<-?([\s\S]*?)-?>>/g;
/** A plain input reference, optionally piped through `quote` (the form the check can render). */
const SIMPLE = /^\s*inputs\.([A-Za-z_][A-Za-z0-9_]*)\s*(\|\s*quote\s*)?$/;
const INPUT_NAME = /\binputs\.([A-Za-z_][A-Za-z0-9_]*)/g;

function actionsOf(text: string): { actions: Action[]; unbalanced: boolean } {
  const actions: Action[] = [];
  for (const match of text.matchAll(ACTION)) actions.push({ text: match[1] ?? '', start: match.index, end: match.index + match[0].length });
  // What is left once the actions are cut out must hold no delimiter.
  let rest = '';
  let at = 0;
  for (const a of actions) {
    rest += text.slice(at, a.start);
    at = a.end;
  }
  rest += text.slice(at);
  return { actions, unbalanced: rest.includes('<<') && !/<<\s*:/.test(rest) };
}

/** The input names a ResourceSet's input sets carry, or undefined when they cannot be known offline. */
function knownInputs(
  resourceSet: Record<string, unknown>,
  namespace: string,
  providers: ReadonlyMap<string, Record<string, unknown>>,
): { names?: Set<string>; sources: string[]; sample: Record<string, string> } {
  const spec = specOf(resourceSet);
  const names = new Set<string>();
  const sources: string[] = [];
  const sample: Record<string, string> = { ...SAMPLE };
  let complete = true;
  for (const set of Array.isArray(spec.inputs) ? spec.inputs : []) {
    if (!isRecord(set)) continue;
    for (const [key, value] of Object.entries(set)) {
      names.add(key);
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') sample[key] ??= String(value);
    }
    sources.push('spec.inputs');
  }
  for (const ref of Array.isArray(spec.inputsFrom) ? spec.inputsFrom : []) {
    if (!isRecord(ref) || typeof ref.name !== 'string') {
      complete = false; // a selector: which providers match is decided in the cluster
      continue;
    }
    const provider = providers.get(`${namespace}/${ref.name}`);
    if (provider === undefined) {
      complete = false;
      continue;
    }
    const type = specOf(provider).type;
    const exported = EXPORTED_INPUTS.find((e) => typeof type === 'string' && e.match.test(type))?.inputs;
    if (exported === undefined) complete = false;
    for (const name of exported ?? []) names.add(name);
    const defaults = specOf(provider).defaultValues;
    if (isRecord(defaults)) {
      for (const [key, value] of Object.entries(defaults)) {
        names.add(key);
        if (typeof value === 'string') sample[key] ??= value;
      }
    }
    sources.push(`ResourceSetInputProvider ${namespace}/${ref.name} (${String(type)})`);
  }
  // The operator adds the provider's own identity to every input set.
  names.add('provider');
  return { ...(complete ? { names } : {}), sources, sample };
}

/**
 * Checks every ResourceSet the Kustomizations apply, after their Flux
 * substitution (their `objects` are substituted already).
 */
export function checkResourceSetTemplates(kustomizations: readonly AppliedKustomization[]): ResourceSetTemplateReport {
  const findings: Finding[] = [];
  const notes: string[] = [];
  const rendered: RenderedTemplateObject[] = [];
  const providers = new Map<string, Record<string, unknown>>();
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if (object.kind !== 'ResourceSetInputProvider' || typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith(OPERATOR_GROUP)) continue;
      providers.set(`${appliedNamespace(object, k.object) ?? 'default'}/${String(metadataOf(object).name ?? '')}`, object);
    }
  }
  for (const k of kustomizations) {
    for (const object of k.objects) {
      if (object.kind !== 'ResourceSet' || typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith(OPERATOR_GROUP)) continue;
      const namespace = appliedNamespace(object, k.object) ?? 'default';
      const owner = `ResourceSet ${namespace}/${String(metadataOf(object).name ?? '')}`;
      const at = (message: string) => findings.push({ file: k.dir, object: owner, message });
      const spec = specOf(object);
      const inputs = knownInputs(object, namespace, providers);
      const templated: unknown[] = [spec.resources, spec.resourcesTemplate, spec.steps];
      let renderable = true;
      const unknown = new Set<string>();
      eachString(templated, (text) => {
        const { actions, unbalanced } = actionsOf(text);
        if (unbalanced) at(`${JSON.stringify(text)} opens a << … >> template action it does not close: the operator cannot render it`);
        for (const action of actions) {
          if (!SIMPLE.test(action.text)) renderable = false;
          for (const [, name] of action.text.matchAll(INPUT_NAME)) if (inputs.names !== undefined && !inputs.names.has(name!)) unknown.add(name!);
        }
      });
      for (const name of [...unknown].sort()) {
        const exported = [...(inputs.names ?? [])]
          .filter((n) => n !== 'provider')
          .sort()
          .join(', ');
        at(
          `<< inputs.${name} >> names an input its input sets do not have (${inputs.sources.join(', ') || 'no inputs'} export ${exported || 'nothing'}): the operator fails to render it`,
        );
      }
      if (inputs.names === undefined)
        notes.push(
          `${k.dir}: ${owner}: its inputs come from providers verify cannot see (a selector, or one outside the tree): << inputs.* >> names not checked`,
        );
      if (!Array.isArray(spec.resources) || unknown.size > 0) continue;
      if (!renderable) {
        notes.push(`${k.dir}: ${owner}: uses template actions beyond << inputs.x >> and << inputs.x | quote >>: its objects are not rendered offline`);
        continue;
      }
      for (const resource of spec.resources) {
        // The operator renders each object's YAML text, then reads the result back.
        const text = stringify(resource, { lineWidth: 0 }).replace(ACTION, (_all, inner: string) => {
          const [, name = '', quoted] = SIMPLE.exec(inner) ?? [];
          const value = inputs.sample[name] ?? '';
          return quoted ? JSON.stringify(value) : value;
        });
        let object: unknown;
        try {
          object = parse(text);
        } catch (error) {
          at(
            `an object rendered with sample inputs is not valid YAML (${error instanceof Error ? error.message.split('\n')[0] : String(error)}): quote the template's value`,
          );
          continue;
        }
        if (!isRecord(object)) continue;
        const metadata = metadataOf(object);
        if (typeof metadata.namespace !== 'string' && object.kind !== 'Namespace' && !isClusterScopedGuess(object)) {
          // The operator applies objects without a namespace into the ResourceSet's own.
          object = { ...object, metadata: { ...metadata, namespace } };
        }
        rendered.push({ file: k.dir, owner, object: object as Record<string, unknown> });
      }
    }
  }
  return { findings, notes, rendered };
}

function isClusterScopedGuess(object: Record<string, unknown>): boolean {
  return /^(Namespace|ClusterRole|ClusterRoleBinding|CustomResourceDefinition|StorageClass|PersistentVolume|PriorityClass)$/.test(String(object.kind));
}

/** How a finding names a rendered object: `Namespace preview-pr-42 (rendered by ResourceSet flux-system/previews)`. */
export function renderedLabel(rendered: RenderedTemplateObject): string {
  return `${objectLabel(rendered.object)} (rendered by ${rendered.owner} with sample inputs)`;
}
