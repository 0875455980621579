/**
 * YAML a caller or a target repository supplies, read as plain data and
 * nothing more. Aliases, anchors, merge keys (`<<`) and tags other than the
 * core schema's are refused, not resolved: each makes the same text mean
 * different things to different readers. A policy that walks the document
 * sees an alias as one opaque node, while the consumer's loader (js-yaml in
 * client-node, the `yaml` package elsewhere) replaces it with the anchored
 * value, so `users: [*u]` with `&u` parked under `preferences:` hid an `exec`
 * from the kubeconfig policy. Refusing the constructs closes that whole class:
 * what is checked is then exactly what any loader builds.
 *
 * The result is a plain JS value (objects, arrays, strings, numbers, booleans,
 * null); callers rebuild their own typed object from it and hand only that on.
 * Messages name the field, the position and the construct, never a value.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, parseDocument, type Document, type Node } from 'yaml';
import type { FieldIssue } from '../errors.js';

/** The YAML 1.2 core schema's tags; anything else (`!custom`, `!!binary`, `!!set`, `!!timestamp`, `!!merge`) is refused. */
const CORE_TAGS: ReadonlySet<string> = new Set(['map', 'seq', 'str', 'null', 'bool', 'int', 'float'].map((t) => `tag:yaml.org,2002:${t}`));
/** Enough to show the pattern; an alias bomb would otherwise answer with thousands of lines. */
const MAX_ISSUES = 10;

/** The plain value of strict YAML, or why the text is refused. */
export type StrictYaml = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly issues: FieldIssue[] };

function childPath(path: string, key: unknown): string {
  const name = isScalar(key) ? String(key.value) : '?';
  return /^[A-Za-z0-9_-]+$/.test(name) ? (path ? `${path}.${name}` : name) : `${path}[${JSON.stringify(name)}]`;
}

/** Parser options: YAML 1.2 core, no implicit merge keys, no `yes`/`no` booleans, no timestamps or binary, unique keys. */
const OPTIONS = { version: '1.2', schema: 'core', merge: false, uniqueKeys: true, prettyErrors: false } as const;

/** The plain value of one parsed document, or why it is refused. */
function strictValueOf(doc: Document.Parsed, lineCounter: LineCounter, field: string): StrictYaml {
  const position = (offset: number | undefined): string => {
    if (offset === undefined) return '';
    const { line, col } = lineCounter.linePos(offset);
    return `line ${line}, column ${col}`;
  };
  const at = (offset: number | undefined): string => (offset === undefined ? '' : ` at ${position(offset)}`);
  // The parser's own messages quote the source line, which may hold a secret: position only.
  const firstError = doc.errors[0];
  if (firstError !== undefined) return { ok: false, issues: [{ field, message: `invalid YAML${at(firstError.pos[0])}` }] };
  if (doc.directives?.yaml.explicit && doc.directives.yaml.version !== '1.2') {
    return { ok: false, issues: [{ field, message: 'declares a YAML version other than 1.2; remove the %YAML directive' }] };
  }
  const issues: FieldIssue[] = [];
  const refuse = (where: string, node: Node | { range?: unknown }, what: string): void => {
    const range = (node as { range?: [number, number, number] }).range;
    const line = position(range?.[0]);
    const place = where ? ` at ${where}${line ? ` (${line})` : ''}` : at(range?.[0]);
    issues.push({ field, message: `${what}${place} is not accepted (no aliases, anchors, merge keys or custom tags): write the value out in full` });
  };
  const walk = (node: unknown, path: string): void => {
    if (node === null || node === undefined || issues.length >= MAX_ISSUES) return;
    if (isAlias(node)) return refuse(path, node, 'a YAML alias (*name)');
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return refuse(path, { range: undefined }, 'an unknown YAML node');
    if (node.anchor) refuse(path, node, 'a YAML anchor (&name)');
    if (node.tag !== undefined && !CORE_TAGS.has(node.tag)) refuse(path, node, 'a YAML tag outside the core schema');
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = pair.key;
        if (!isScalar(key)) {
          // A mapping or list as a key: loaders stringify it differently.
          if (isAlias(key)) refuse(path, key, 'a YAML alias (*name) as a key');
          else refuse(path, (key as Node | null) ?? node, 'a key that is not a plain string');
          continue;
        }
        if (key.anchor) refuse(path, key, 'a YAML anchor (&name) on a key');
        if (key.tag !== undefined && !CORE_TAGS.has(key.tag)) refuse(path, key, 'a YAML tag outside the core schema on a key');
        // YAML 1.1 loaders (js-yaml among them) splice `<<: *x` into the mapping; quoted or not, it is refused.
        if (key.value === '<<') refuse(path, key, 'a YAML merge key (<<)');
        walk(pair.value, childPath(path, key));
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => walk(item, `${path}[${index}]`));
    }
  };
  walk(doc.contents, '');
  // Warnings include unresolved tags and keys the parser had to stringify: both make loaders disagree.
  const firstWarning = doc.warnings[0];
  if (issues.length === 0 && firstWarning !== undefined)
    issues.push({ field, message: `has a YAML construct loaders read differently${at(firstWarning.pos[0])}` });
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: doc.toJS({ maxAliasCount: 0 }) as unknown };
}

/**
 * Parses one YAML (or JSON) document under the core schema and refuses every
 * construct whose meaning depends on the reader. `field` names the input in
 * messages (`kubeconfig.inline`, `scaffold.yaml`).
 */
export function parseStrictYaml(text: string, field: string): StrictYaml {
  const lineCounter = new LineCounter();
  return strictValueOf(parseDocument(text, { ...OPTIONS, lineCounter }), lineCounter, field);
}

/**
 * The plain values of every non-empty document of a YAML stream, each held to
 * the rules of {@link parseStrictYaml}. Issues name `field` and the line
 * within the whole text.
 */
export function parseStrictYamlDocuments(
  text: string,
  field: string,
): { readonly ok: true; readonly values: unknown[] } | { readonly ok: false; readonly issues: FieldIssue[] } {
  const lineCounter = new LineCounter();
  const values: unknown[] = [];
  for (const doc of parseAllDocuments(text, { ...OPTIONS, lineCounter })) {
    const read = strictValueOf(doc, lineCounter, field);
    if (!read.ok) return read;
    if (read.value !== null && read.value !== undefined) values.push(read.value);
  }
  return { ok: true, values };
}
