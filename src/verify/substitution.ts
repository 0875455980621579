/**
 * Flux postBuild substitution analysis for one Kustomization: which `${var}`s
 * its built output uses, which its postBuild defines, and what Flux would
 * apply. Flux substitutes an undefined variable with an empty string (or,
 * with strict substitution, the default since kustomize-controller v1.9 /
 * Flux 2.9, fails the reconcile); without postBuild it applies the literal
 * `${var}` text, and so it does when postBuild defines no variable at all
 * (substitution runs only with at least one, unless
 * `postBuild.substituteStrategy: Always`). An object labelled or annotated
 * `kustomize.toolkit.fluxcd.io/substitute: disabled` is left alone.
 * Neither is visible in a schema-valid manifest, hence this check
 * (spec 004, "The failure mode this creates").
 */
import { parse, stringify } from 'yaml';
import { isRecord } from '../model/is-record.js';
import { eachString } from './each-string.js';
import { objectLabel } from './object-label.js';
import { substituteScalars } from './substitute-scalars.js';
import { substituteVariables } from './substitute-variables.js';
import { variableTokens } from './variable-references.js';

/** The annotation that exempts one object from substitution. */
const DISABLE_ANNOTATION = 'kustomize.toolkit.fluxcd.io/substitute';

/** What the analysis reads. */
export interface SubstitutionInput {
  /** The Flux Kustomization (parsed object). */
  readonly kustomization: unknown;
  /** Its built output, one parsed object per document. */
  readonly objects: readonly unknown[];
  /**
   * Looks a ConfigMap up among the repository's objects by namespace and
   * name; returns its `data`, or undefined when there is none.
   */
  readonly configMap: (namespace: string, name: string) => Readonly<Record<string, unknown>> | undefined;
  /** Whether an undefined variable fails the reconcile (Flux 2.9+). @default true */
  readonly strict?: boolean;
}

/** What the analysis found. */
export interface SubstitutionAnalysis {
  /** One message per defect, each a finding on the Kustomization. */
  readonly issues: readonly string[];
  /** Things that cannot be checked offline (variables a Secret may supply). */
  readonly notes: readonly string[];
  /** Every variable the output uses, sorted. */
  readonly used: readonly string[];
  /** The values Flux would substitute, as far as the repository defines them. */
  readonly values: ReadonlyMap<string, string>;
  /** Renders one output object as Flux applies it (unchanged when Flux does not substitute it). */
  apply(object: unknown): unknown;
}

interface SourceRef {
  readonly kind: string;
  readonly name: string;
  readonly optional: boolean;
}

/**
 * A CustomResourceDefinition: its `${...}` are schema documentation (Flux's
 * own Kustomization CRD describes `${var:=default}`), which flux bootstrap's
 * gotk-components.yaml applies without postBuild, on purpose.
 */
function isCustomResourceDefinition(object: unknown): boolean {
  return (
    isRecord(object) &&
    object.kind === 'CustomResourceDefinition' &&
    typeof object.apiVersion === 'string' &&
    object.apiVersion.startsWith('apiextensions.k8s.io/')
  );
}

/** kustomize-controller honours the key as a label or an annotation. */
function substitutionDisabled(object: unknown): boolean {
  const metadata = isRecord(object) && isRecord(object.metadata) ? object.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  const labels = isRecord(metadata.labels) ? metadata.labels : {};
  return annotations[DISABLE_ANNOTATION] === 'disabled' || labels[DISABLE_ANNOTATION] === 'disabled';
}

function sourcesOf(postBuild: Record<string, unknown>): SourceRef[] {
  const list = Array.isArray(postBuild.substituteFrom) ? postBuild.substituteFrom : [];
  return list.filter(isRecord).map((s) => ({
    kind: String(s.kind ?? ''),
    name: String(s.name ?? ''),
    optional: s.optional === true,
  }));
}

/** Analyzes one Kustomization's substitution wiring against its built output. */
export function analyzeSubstitution(input: SubstitutionInput): SubstitutionAnalysis {
  const kustomization = isRecord(input.kustomization) ? input.kustomization : {};
  const metadata = isRecord(kustomization.metadata) ? kustomization.metadata : {};
  const spec = isRecord(kustomization.spec) ? kustomization.spec : {};
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : 'flux-system';
  const postBuild = isRecord(spec.postBuild) ? spec.postBuild : undefined;

  // Variable → the first object using it without a default / at all.
  const needed = new Map<string, string>();
  const used = new Map<string, string>();
  for (const object of input.objects) {
    if (substitutionDisabled(object)) continue;
    eachString(object, (text) => {
      for (const token of variableTokens(text)) {
        if (token.kind !== 'reference') continue;
        if (!used.has(token.name)) used.set(token.name, objectLabel(object));
        if (token.fallback === undefined && !needed.has(token.name)) needed.set(token.name, objectLabel(object));
      }
    });
  }
  const usedNames = [...used.keys()].sort();
  const issues: string[] = [];
  const notes: string[] = [];
  const values = new Map<string, string>();

  if (postBuild === undefined) {
    // Without postBuild the literal text is applied: a mistake, except in a CRD's schema documentation.
    const literal = new Set<string>();
    for (const object of input.objects) {
      if (substitutionDisabled(object) || isCustomResourceDefinition(object)) continue;
      eachString(object, (text) => {
        for (const token of variableTokens(text)) if (token.kind === 'reference') literal.add(token.name);
      });
    }
    if (literal.size > 0) {
      issues.push(
        `output uses ${[...literal]
          .sort()
          .map((n) => `\${${n}}`)
          .join(', ')} but spec.postBuild is not set: Flux would apply the literal text`,
      );
    }
    return { issues, notes, used: usedNames, values, apply: (object) => object };
  }

  const configMaps: string[] = [];
  const secrets: string[] = [];
  // Later substituteFrom entries override earlier ones; inline `substitute` overrides them all.
  for (const source of sourcesOf(postBuild)) {
    const ref = `${namespace}/${source.name}`;
    if (source.kind === 'Secret') {
      secrets.push(`Secret ${ref}`);
      continue;
    }
    if (source.kind !== 'ConfigMap') continue;
    configMaps.push(`ConfigMap ${ref}`);
    const data = input.configMap(namespace, source.name);
    if (data === undefined) {
      if (!source.optional) issues.push(`postBuild.substituteFrom ConfigMap ${ref} does not exist in the repository (and is not optional)`);
      continue;
    }
    for (const [key, value] of Object.entries(data)) values.set(key, String(value));
  }
  const inline = isRecord(postBuild.substitute) ? postBuild.substitute : {};
  for (const [key, value] of Object.entries(inline)) values.set(key, String(value));

  // With no variable at all Flux does not substitute (WithVariables, the default strategy).
  if (values.size === 0 && secrets.length === 0 && postBuild.substituteStrategy !== 'Always' && usedNames.length > 0) {
    issues.push(
      `postBuild defines no variable, so Flux skips substitution and applies ${usedNames.map((n) => `\${${n}}`).join(', ')} as literal text: define them, or set spec.postBuild.substituteStrategy: Always to apply their defaults`,
    );
    return { issues, notes, used: usedNames, values, apply: (object) => object };
  }
  const definedBy = ['postBuild.substitute', ...configMaps].join(', ');
  const consequence = input.strict === false ? 'Flux 2.8 substitutes an empty string' : 'Flux 2.9+ fails the reconcile (strict substitution)';
  for (const name of [...needed.keys()].sort()) {
    if (values.has(name)) continue;
    const where = needed.get(name)!;
    if (secrets.length > 0) {
      notes.push(`\${${name}} (used by ${where}) may come from ${secrets.join(', ')}, whose keys cannot be checked offline`);
    } else {
      issues.push(`\${${name}} (used by ${where}) is not defined by ${definedBy}: ${consequence}`);
    }
  }

  const apply = (object: unknown): unknown => {
    if (substitutionDisabled(object)) return object;
    // Flux substitutes the object's serialized YAML, unquoted scalars included
    // (kustomize drops redundant quotes), so `"${flag}"` with flag=true becomes a
    // boolean there too. No folding: a folded line could split a reference.
    // Printing and parsing again is the dearest step of a verify: most objects are substituted as surely on the object
    // (substitute-scalars.ts; one that holds no `${` comes back as it is).
    const inPlace = substituteScalars(object, values);
    if (inPlace !== undefined) return inPlace.value;
    const text = stringify(object, { lineWidth: 0 });
    if (!text.includes('${')) return object;
    return parse(substituteVariables(text, values));
  };
  return { issues, notes, used: usedNames, values, apply };
}
