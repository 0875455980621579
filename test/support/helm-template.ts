/**
 * Test support: `helm template` for this repository's chart, where no helm
 * binary can be installed (neither Debian nor npm ships one). It implements the
 * part of Go's text/template and of Helm's function library the chart uses, with
 * their semantics, and refuses anything else, so a template outside that subset
 * fails the test instead of rendering wrongly:
 *
 * - actions `{{ }}` with `{{-` / `-}}` trimming all adjacent white space;
 *   comments `{{/* … *\/}}`; `if` / `else if` / `else`, `range` (lists and maps,
 *   map keys in sorted order like Go, with `$k, $v :=`), `with`, `define`;
 * - pipelines `a | f b`, where the piped value is the last argument, `( … )`,
 *   string and number literals, `.Field.Chains`, `$`, `$var.field`;
 * - truth as Go's IsTrue (false, 0, nil, empty string, list and map are false);
 *   a missing value prints as nothing (Helm's `missingkey=zero` + `<no value>` removal);
 * - functions: include, nindent, indent, toYaml (keys sorted like sigs.k8s.io/yaml,
 *   trailing newline dropped), quote, default, required, printf (%s %d %v), join,
 *   dict, and, or, not, eq, ne;
 * - rendering like Helm's engine: defines from every file, files starting with `_`
 *   and NOTES.txt not rendered as manifests, values = chart defaults deep-merged with
 *   overrides (lists replaced), `.Release` (Name, Namespace, Service "Helm"),
 *   `.Chart` (Name, Version, AppVersion from Chart.yaml); the output split at `---`
 *   lines, empty documents dropped.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

type Value = unknown;
type Scope = { readonly vars: Map<string, Value>; readonly parent?: Scope };

type Node =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'print'; readonly pipe: string }
  | { readonly type: 'if'; readonly branches: { readonly pipe: string; readonly body: Node[] }[]; readonly otherwise: Node[] }
  | { readonly type: 'range' | 'with'; readonly vars: string[]; readonly pipe: string; readonly body: Node[]; readonly otherwise: Node[] };

const isMap = (v: Value): v is Record<string, Value> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Go's template.IsTrue. */
export function truthy(v: Value): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

function print(v: Value): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Error(`printing a ${Array.isArray(v) ? 'list' : 'map'} is not supported (use toYaml)`);
}

/** Splits template text into text and actions, trimming around `{{-` and `-}}`. */
function lex(source: string): { kind: 'text' | 'action'; value: string }[] {
  const parts: { kind: 'text' | 'action'; value: string }[] = [];
  let at = 0;
  let trimNext = false;
  while (at < source.length) {
    const open = source.indexOf('{{', at);
    let text = source.slice(at, open < 0 ? source.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (open < 0) {
      parts.push({ kind: 'text', value: text });
      break;
    }
    const close = source.indexOf('}}', open);
    if (close < 0) throw new Error('unclosed action');
    let inner = source.slice(open + 2, close);
    if (/^-\s/.test(inner)) {
      text = text.replace(/\s+$/, '');
      inner = inner.slice(1);
    }
    trimNext = /\s-$/.test(inner);
    if (trimNext) inner = inner.slice(0, -1);
    parts.push({ kind: 'text', value: text });
    inner = inner.trim();
    if (!(inner.startsWith('/*') && inner.endsWith('*/'))) parts.push({ kind: 'action', value: inner });
    at = close + 2;
  }
  return parts.filter((p) => !(p.kind === 'text' && p.value === ''));
}

/** Builds the node tree; `define` bodies go to `defines`. */
function parseTemplate(source: string, defines: Map<string, Node[]>): Node[] {
  const parts = lex(source);
  let i = 0;
  const block = (stops: readonly string[]): { nodes: Node[]; stop: string } => {
    const nodes: Node[] = [];
    while (i < parts.length) {
      const part = parts[i++]!;
      if (part.kind === 'text') {
        nodes.push({ type: 'text', text: part.value });
        continue;
      }
      const action = part.value;
      const word = /^(\w+)/.exec(action)?.[1] ?? '';
      if (stops.some((s) => action === s || (s === 'else' && action.startsWith('else')))) return { nodes, stop: action };
      if (word === 'define') {
        const name = /^define\s+"([^"]+)"$/.exec(action)?.[1];
        if (name === undefined) throw new Error(`bad define: ${action}`);
        defines.set(name, block(['end']).nodes);
      } else if (word === 'if') {
        const branches = [{ pipe: action.slice(2).trim(), body: [] as Node[] }];
        let otherwise: Node[] = [];
        for (;;) {
          const { nodes: body, stop } = block(['else', 'end']);
          branches.at(-1)!.body = body;
          if (stop === 'end') break;
          if (stop.startsWith('else if ')) branches.push({ pipe: stop.slice('else if '.length).trim(), body: [] });
          else if (stop === 'else') {
            otherwise = block(['end']).nodes;
            break;
          } else throw new Error(`unsupported: ${stop}`);
        }
        nodes.push({ type: 'if', branches, otherwise });
      } else if (word === 'range' || word === 'with') {
        const m = /^(?:range|with)\s+(?:(\$\w+)(?:\s*,\s*(\$\w+))?\s*:=\s*)?(.+)$/.exec(action);
        if (m === null) throw new Error(`bad ${word}: ${action}`);
        const { nodes: body, stop } = block(['else', 'end']);
        const otherwise = stop === 'else' ? block(['end']).nodes : [];
        nodes.push({ type: word, vars: [m[1], m[2]].filter((v): v is string => v !== undefined), pipe: m[3]!, body, otherwise });
      } else if (['end', 'else', 'template', 'block', 'break', 'continue'].includes(word)) {
        throw new Error(`unexpected or unsupported action: ${action}`);
      } else {
        nodes.push({ type: 'print', pipe: action });
      }
    }
    if (stops.length > 0) throw new Error(`missing {{ end }} (wanted ${stops.join(' or ')})`);
    return { nodes, stop: '' };
  };
  return block([]).nodes;
}

/** Splits a pipeline into tokens. */
function tokenize(pipe: string): string[] {
  const tokens: string[] = [];
  const pattern = /\s*("(?:[^"\\]|\\.)*"|\(|\)|\||-?\d+(?:\.\d+)?|\$?[\w]*(?:\.[\w]+)*\.?|\S)/gy;
  let m: RegExpExecArray | null;
  while ((m = pattern.exec(pipe)) !== null && m[0] !== '') {
    if (m[1] !== undefined && m[1] !== '') tokens.push(m[1]);
    if (pattern.lastIndex >= pipe.length) break;
  }
  return tokens;
}

type Functions = Record<string, (...args: Value[]) => Value>;

class Renderer {
  constructor(
    private readonly defines: Map<string, Node[]>,
    private readonly root: Value,
  ) {}

  private readonly functions: Functions = {
    include: (name, data) => {
      const body = this.defines.get(String(name));
      if (body === undefined) throw new Error(`no template "${String(name)}"`);
      return this.nodes(body, data, { vars: new Map([['$', this.root]]) });
    },
    indent: (n, s) => print(s).replace(/^/gm, ' '.repeat(Number(n))),
    nindent: (n, s) => `\n${print(s).replace(/^/gm, ' '.repeat(Number(n)))}`,
    toYaml: (v) => (v === undefined || v === null ? 'null' : stringify(v, { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, '')),
    quote: (...args) => args.filter((a) => a !== undefined && a !== null).map((a) => JSON.stringify(print(a))).join(' '),
    default: (fallback, given) => (truthy(given) ? given : fallback),
    required: (message, v) => {
      if (v === undefined || v === null || v === '') throw new Error(String(message));
      return v;
    },
    printf: (format, ...args) => {
      let k = 0;
      return String(format).replace(/%[sdv%]/g, (spec) => (spec === '%%' ? '%' : print(args[k++])));
    },
    join: (sep, list) => (Array.isArray(list) ? list.map(print).join(String(sep)) : print(list)),
    dict: (...pairs) => Object.fromEntries(Array.from({ length: pairs.length / 2 }, (_, k) => [String(pairs[2 * k]), pairs[2 * k + 1]])),
    and: (...args) => args.find((a) => !truthy(a)) ?? args.at(-1),
    or: (...args) => args.find((a) => truthy(a)) ?? args.at(-1),
    not: (v) => !truthy(v),
    eq: (a, b) => a === b,
    ne: (a, b) => a !== b,
  };

  render(nodes: Node[]): string {
    return this.nodes(nodes, this.root, { vars: new Map([['$', this.root]]) });
  }

  private nodes(nodes: readonly Node[], dot: Value, scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      if (node.type === 'text') out += node.text;
      else if (node.type === 'print') out += print(this.pipeline(node.pipe, dot, scope));
      else if (node.type === 'if') {
        const branch = node.branches.find((b) => truthy(this.pipeline(b.pipe, dot, scope)));
        out += this.nodes(branch?.body ?? node.otherwise, dot, scope);
      } else if (node.type === 'with') {
        const value = this.pipeline(node.pipe, dot, scope);
        out += truthy(value) ? this.nodes(node.body, value, scope) : this.nodes(node.otherwise, dot, scope);
      } else {
        const value = this.pipeline(node.pipe, dot, scope);
        const entries: [Value, Value][] = Array.isArray(value) ? value.map((v, k) => [k, v]) : isMap(value) ? Object.keys(value).sort().map((k) => [k, value[k]]) : [];
        if (entries.length === 0) out += this.nodes(node.otherwise, dot, scope);
        for (const [key, item] of entries) {
          const vars = new Map<string, Value>();
          if (node.vars.length === 1) vars.set(node.vars[0]!, item);
          if (node.vars.length === 2) {
            vars.set(node.vars[0]!, key);
            vars.set(node.vars[1]!, item);
          }
          out += this.nodes(node.body, item, { vars, parent: scope });
        }
      }
    }
    return out;
  }

  private pipeline(pipe: string, dot: Value, scope: Scope): Value {
    const tokens = tokenize(pipe);
    let at = 0;
    const operand = (): Value => {
      const token = tokens[at++];
      if (token === undefined) throw new Error(`incomplete pipeline: ${pipe}`);
      if (token === '(') {
        const value = commands(')');
        at++;
        return value;
      }
      if (token.startsWith('"')) return JSON.parse(token) as string;
      if (/^-?\d/.test(token)) return Number(token);
      if (token === 'true' || token === 'false') return token === 'true';
      if (token.startsWith('$')) {
        const [name = '', ...path] = token.split('.');
        let s: Scope | undefined = scope;
        while (s !== undefined && !s.vars.has(name)) s = s.parent;
        if (s === undefined) throw new Error(`undefined variable ${name}`);
        return field(s.vars.get(name), path);
      }
      if (token.startsWith('.')) return field(dot, token.slice(1).split('.').filter((p) => p !== ''));
      throw new Error(`unexpected ${token} in ${pipe}`);
    };
    const command = (end: string): Value => {
      const head = tokens[at];
      if (head !== undefined && /^[a-zA-Z]\w*$/.test(head) && head !== 'true' && head !== 'false') {
        at++;
        const fn = this.functions[head];
        if (fn === undefined) throw new Error(`function "${head}" is not supported`);
        const args: Value[] = [];
        while (at < tokens.length && tokens[at] !== '|' && tokens[at] !== end) args.push(operand());
        return { fn, args };
      }
      return { value: operand() };
    };
    const commands = (end: string): Value => {
      let result: Value;
      let first = true;
      while (at < tokens.length && tokens[at] !== end) {
        if (!first) {
          if (tokens[at] !== '|') throw new Error(`expected | in ${pipe}`);
          at++;
        }
        const c = command(end) as { fn?: (...a: Value[]) => Value; args?: Value[]; value?: Value };
        result = c.fn === undefined ? c.value : c.fn(...(c.args ?? []), ...(first ? [] : [result]));
        first = false;
      }
      return result;
    };
    const value = commands('');
    if (at < tokens.length) throw new Error(`unexpected ${tokens[at]} in ${pipe}`);
    return value;
  }
}

function field(value: Value, path: readonly string[]): Value {
  let current = value;
  for (const key of path) current = isMap(current) ? current[key] : undefined;
  return current;
}

/** Deep-merges `override` into `base` the way Helm coalesces values (maps merged, everything else replaced). */
export function mergeValues(base: Value, override: Value): Value {
  if (!isMap(base) || !isMap(override)) return override === undefined ? base : override;
  const merged: Record<string, Value> = { ...base };
  for (const [key, value] of Object.entries(override)) merged[key] = mergeValues(base[key], value);
  return merged;
}

/** What `helm template RELEASE CHART --namespace NS -f values` would print, and the merged values. */
export async function helmTemplate(chartDir: string, options: { readonly release: string; readonly namespace: string; readonly values?: Record<string, unknown> }): Promise<{ manifests: string; values: Value }> {
  const chart = parse(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string; version: string; appVersion?: string };
  const values = mergeValues(parse(await readFile(join(chartDir, 'values.yaml'), 'utf8')) ?? {}, options.values ?? {});
  const files = (await readdir(join(chartDir, 'templates'))).sort();
  const defines = new Map<string, Node[]>();
  const parsed = new Map<string, Node[]>();
  for (const file of files) parsed.set(file, parseTemplate(await readFile(join(chartDir, 'templates', file), 'utf8'), defines));
  const renderer = new Renderer(defines, {
    Values: values,
    Release: { Name: options.release, Namespace: options.namespace, Service: 'Helm', IsInstall: true, Revision: 1 },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion ?? '' },
  });
  const documents: string[] = [];
  for (const [file, nodes] of parsed) {
    if (file.startsWith('_') || file === 'NOTES.txt') continue;
    const text = renderer.render(nodes);
    for (const document of text.split(/^---\s*$/m)) {
      // Helm drops documents that hold nothing but white space and comments.
      if (document.split('\n').every((line) => line.trim() === '' || line.trim().startsWith('#'))) continue;
      documents.push(`# Source: ${chart.name}/templates/${file}\n${document.replace(/^\n+/, '')}`);
    }
  }
  return { manifests: documents.join('\n---\n'), values };
}
