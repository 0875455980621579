/**
 * Validates Kubernetes objects: custom resources against the upstream CRD
 * schemas (strict, see strict-schema.ts) plus the Flux rules those schemas
 * express only in CEL, and built-in kinds through an injected validator
 * (their schemas live in @kubernetes/client-node's model metadata, an edge).
 *
 * Pure: the CRDs arrive through a RepoReader rooted at a schema directory,
 * or already read (the package's shipped table), so the composition root
 * decides where they live.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FieldIssue } from '../errors.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { closestName } from './closest-name.js';
import { type CrdKinds, crdKindsIn } from './crd-table.js';
import { fieldPath } from './field-path.js';
import { fluxRuleIssues } from './flux-rules.js';
import { isRecord } from '../model/is-record.js';
import type { ObjectCheck, ObjectValidator } from './object-validator.js';
import { schemaForInstance } from './schema-for-instance.js';
import { strictSchemaOf } from './strict-schema.js';

// ajv-formats is CommonJS: under NodeNext the default import is `module.exports`,
// which is the plugin and also carries it as `.default` (the typed spelling).
const addFormats = addFormatsPlugin.default;

/**
 * The API server checks `pattern` with Go's RE2, whose inline flags
 * (`^(?i)(abort|warn)?$` in Prometheus Operator's CRDs) JavaScript does not
 * parse. Where they lead the pattern (alone or after `^`) they hold for all
 * of it, so they become RegExp flags; anything else is compiled as written.
 */
const goPattern = Object.assign(
  (pattern: string, flags: string) => {
    const inline = /^(\^?)\(\?([imsU]+)\)/.exec(pattern);
    if (inline === null) return new RegExp(pattern, flags);
    const extra = [...new Set(inline[2]!)].filter((flag) => flag !== 'U' && !flags.includes(flag)).join('');
    return new RegExp(inline[1]! + pattern.slice(inline[0].length), flags + extra);
  },
  { code: 'goPattern' },
);

/** What the validator needs. */
export interface SchemaValidatorDeps {
  /**
   * The CRDs, read on first use and kept for the validator's lifetime: a
   * schema directory (`*.yaml` files, each holding one or more
   * CustomResourceDefinitions), or a function giving them already read (the
   * package's shipped table, crd-schema-dir.ts's `shippedCrdKinds`).
   */
  readonly schemas: RepoReader | (() => Promise<CrdKinds>);
  /** Validates built-in kinds (Deployment, Service, …); asked for every kind no CRD defines. */
  readonly coreKinds: ObjectValidator;
}

interface CrdVersion {
  readonly served: boolean;
  readonly schema: unknown;
  strict?: Record<string, unknown>;
  /**
   * Validators of the strict schema cut to what an object reaches
   * (schema-for-instance.ts), by the cut's JSON: objects of one shape share
   * one. Compiling the whole schema cost up to 107 ms (cert-manager's
   * ClusterIssuer) in every verifying process; the cuts of a run's objects
   * take a few milliseconds each.
   */
  cuts?: Map<string, ValidateFunction>;
}

/** One CRD file, parsed only when a kind it defines is first validated (a table's entry comes parsed). */
interface CrdFile {
  readonly text?: string;
  parsed?: Map<string, Map<string, CrdVersion>>;
}

/** `group/kind` → the file that defines it. */
type CrdIndex = Map<string, CrdFile>;

// The Flux duration pattern, `^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`, reads badly in a finding.
const DURATION_PATTERN = '(ms|s|m|h)';

/** A file's CRDs (or a table's entry) as the validator keeps them: each version's compiled checks are added on use. */
function versionsOf(kinds: CrdKinds): Map<string, Map<string, CrdVersion>> {
  return new Map(
    Object.entries(kinds).map(([kind, versions]) => [kind, new Map(Object.entries(versions).map(([name, { served, schema }]) => [name, { served, schema }]))]),
  );
}

/**
 * controller-gen and the cert-manager / sealed-secrets generators all write
 * `spec.group` and `spec.names.kind` at fixed indents; reading them by pattern
 * lets us index a file without parsing it (the cert-manager issuer CRDs are
 * 330 kB each). Anything unusual is parsed in full.
 */
function quickIndex(text: string): string | undefined {
  if ((text.match(/^kind: CustomResourceDefinition\s*$/gm) ?? []).length !== 1) return undefined;
  const group = /^ {2}group: (\S+)\s*$/m.exec(text)?.[1];
  const kind = /^ {2}names:\s*$(?:\n {4}.*$)*?\n {4}kind: (\S+)\s*$/m.exec(text)?.[1];
  return group !== undefined && kind !== undefined ? `${group}/${kind}` : undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function segmentsOf(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^(0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : segment));
}

function issueOf(error: ErrorObject): FieldIssue {
  const segments = segmentsOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const properties = isRecord(error.parentSchema) && isRecord(error.parentSchema.properties) ? error.parentSchema.properties : {};
      const suggestion = closestName(name, Object.keys(properties));
      return {
        field: fieldPath([...segments, name]),
        message: `unknown field${suggestion ? ` (did you mean ${suggestion}?)` : ''}`,
      };
    }
    case 'required':
      return { field: fieldPath([...segments, String(params.missingProperty)]), message: 'required field is missing' };
    case 'type': {
      const expected = Array.isArray(params.type) ? params.type.join(' or ') : String(params.type);
      return { field: fieldPath(segments), message: `must be ${expected} (got ${describe(error.data)})` };
    }
    case 'pattern': {
      const pattern = String(params.pattern);
      return {
        field: fieldPath(segments),
        message: pattern.includes(DURATION_PATTERN)
          ? `${JSON.stringify(error.data)} is not a duration (Go syntax such as 30s, 5m, 1h30m)`
          : `${JSON.stringify(error.data)} does not match ${pattern}`,
      };
    }
    case 'enum':
      return {
        field: fieldPath(segments),
        message: `${JSON.stringify(error.data)} is not one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'format':
      return { field: fieldPath(segments), message: `${JSON.stringify(error.data)} is not a valid ${String(params.format)}` };
    default:
      return { field: fieldPath(segments), message: error.message ?? error.keyword };
  }
}

/** Validates custom resources against CRD schemas and delegates built-in kinds. */
export class SchemaValidator implements ObjectValidator {
  readonly #deps: SchemaValidatorDeps;
  readonly #ajv: Ajv;
  #index?: Promise<CrdIndex>;

  constructor(deps: SchemaValidatorDeps) {
    this.#deps = deps;
    // strict: false because the CRD schemas carry x-kubernetes-* keywords ajv
    // does not know; unicodeRegExp: false because the schemas' patterns are
    // Go RE2 syntax, closer to non-unicode JavaScript regexps.
    this.#ajv = new Ajv({
      strict: false,
      allErrors: true,
      verbose: true,
      unicodeRegExp: false,
      logger: false,
      // Halves compile time of the big CRD schemas; each validator runs on a handful of objects.
      code: { optimize: false, regExp: goPattern },
      // The schemas are CRDs' openAPIV3Schema, which the API server holds to its
      // structural rules before it serves them; checking each cut against JSON
      // Schema's meta-schema first cost every process 27 ms to compile that
      // meta-schema, and a cut ajv cannot compile still fails in compile().
      validateSchema: false,
    });
    addFormats(this.#ajv);
  }

  async validate(object: unknown): Promise<ObjectCheck> {
    if (!isRecord(object)) return { status: 'checked', issues: [{ field: '', message: 'is not a mapping' }] };
    const { apiVersion, kind } = object;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || apiVersion === '' || kind === '') {
      return { status: 'checked', issues: [{ field: '', message: 'apiVersion and kind must both be set' }] };
    }
    const slash = apiVersion.lastIndexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);

    const ruleIssues = fluxRuleIssues(object);
    const file = (await this.#loadIndex()).get(`${group}/${kind}`);
    if (file === undefined) {
      if (ruleIssues.length > 0) return { status: 'checked', issues: ruleIssues };
      return this.#deps.coreKinds.validate(object);
    }
    if (ruleIssues.some((issue) => issue.field === 'apiVersion')) return { status: 'checked', issues: ruleIssues };

    file.parsed ??= versionsOf(crdKindsIn(file.text ?? ''));
    const versions = file.parsed.get(`${group}/${kind}`) ?? new Map<string, CrdVersion>();
    const entry = versions.get(version);
    if (entry === undefined || !entry.served) {
      const served = [...versions].filter(([, v]) => v.served).map(([name]) => `${group}/${name}`);
      return {
        status: 'checked',
        issues: [{ field: 'apiVersion', message: `${apiVersion} is not served for ${kind} (served: ${served.join(', ') || 'none'})` }],
      };
    }
    const validate = this.#validatorFor(entry, object);
    const issues: FieldIssue[] = [];
    const seen = new Set<string>();
    if (!validate(object)) {
      for (const error of validate.errors ?? []) {
        const issue = issueOf(error);
        const key = `${issue.field}\n${issue.message}`;
        if (seen.has(key)) continue;
        seen.add(key);
        issues.push(issue);
      }
    }
    return { status: 'checked', issues: [...issues, ...ruleIssues] };
  }

  #validatorFor(entry: CrdVersion, object: unknown): ValidateFunction {
    entry.strict ??= strictSchemaOf(entry.schema);
    const cut = schemaForInstance(entry.strict, object) as Record<string, unknown>;
    const key = JSON.stringify(cut);
    entry.cuts ??= new Map();
    let validate = entry.cuts.get(key);
    if (validate === undefined) {
      validate = this.#ajv.compile(cut);
      entry.cuts.set(key, validate);
    }
    return validate;
  }

  /** Reads every schema file once; the promise is shared by concurrent first calls. */
  #loadIndex(): Promise<CrdIndex> {
    this.#index ??= (async () => {
      const index: CrdIndex = new Map();
      const { schemas } = this.#deps;
      if (typeof schemas === 'function') {
        const parsed = versionsOf(await schemas());
        for (const kind of parsed.keys()) index.set(kind, { parsed });
        return index;
      }
      const files = (await schemas.list('')).filter((path) => /\.ya?ml$/.test(path));
      for (const path of files) {
        const text = await schemas.read(path);
        if (text === undefined) continue;
        const key = quickIndex(text);
        if (key !== undefined) {
          if (!index.has(key)) index.set(key, { text });
          continue;
        }
        const parsed = versionsOf(crdKindsIn(text));
        for (const kindKey of parsed.keys()) if (!index.has(kindKey)) index.set(kindKey, { text, parsed });
      }
      return index;
    })();
    return this.#index;
  }
}
