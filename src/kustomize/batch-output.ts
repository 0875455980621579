/**
 * The files and the output of one combined kustomize build (batched-kustomize.ts).
 * Each requested directory gets a wrapper kustomization that names it as its
 * only resource and labels every object it yields with a private key; a root
 * kustomization lists the wrappers. The one output is then split back by that
 * label, and the label is cut out of the text, so each directory gets the
 * bytes its own build prints: kustomize orders the whole output by resource
 * id alone (the legacy order, a total order since ids are unique in one
 * build), so a directory's objects keep the relative order a build of it
 * alone gives, and kyaml prints each object the same wherever it sits.
 */
import { type CST, Parser } from 'yaml';

/** The label marking which wrapper an object came from; never in any tree we build. */
export const BATCH_ENTRY_LABEL = 'gitops-scaffolder.batch/entry';

/** The wrapper kustomization of entry `index`: `target` is the directory, relative to the wrapper (kustomize refuses absolute roots). */
export function wrapperKustomization(index: number, target: string): string {
  // JSON strings are YAML strings: a directory named like a number or with a colon stays a string.
  return [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    `resources: [${JSON.stringify(target)}]`,
    // metadata.labels only: no selector and no pod template changes, so nothing but the label differs.
    'labels:',
    `- pairs: {${JSON.stringify(BATCH_ENTRY_LABEL)}: ${JSON.stringify(String(index))}}`,
    '  includeSelectors: false',
    '  includeTemplates: false',
    '',
  ].join('\n');
}

/** The root kustomization listing wrappers `w0` … `w<count-1>`. */
export function rootKustomization(count: number): string {
  const wrappers = Array.from({ length: count }, (_, i) => `- w${i}`);
  return ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization', 'resources:', ...wrappers, ''].join('\n');
}

/** The start of the line holding `offset`. */
function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Just past the newline ending the line holding `offset` (the text's end when there is none). */
function lineEnd(text: string, offset: number): number {
  const newline = text.indexOf('\n', offset);
  return newline === -1 ? text.length : newline + 1;
}

/** The item of a block map whose key is the plain scalar `key`. */
function itemOf(map: CST.Token | undefined, key: string): CST.BlockMap['items'][number] | undefined {
  if (map?.type !== 'block-map') return undefined;
  return map.items.find((item) => item.key?.type === 'scalar' && item.key.source === key);
}

/** What cutting the label leaves behind: the label's line alone, or with its `labels:` line when it was the only label. */
const LABEL_LINE = new RegExp(`^ {4}${BATCH_ENTRY_LABEL.replace(/[./]/g, '\\$&')}: "(0|[1-9]\\d*)"\\n$`);
const LABELS_AND_LABEL_LINES = new RegExp(`^ {2}labels:\\n {4}${BATCH_ENTRY_LABEL.replace(/[./]/g, '\\$&')}: "(0|[1-9]\\d*)"\\n$`);

/** The label's line as kyaml prints it in `metadata.labels`: four spaces in, its value double-quoted. */
const LABEL_ITEM = new RegExp(`^ {4}${BATCH_ENTRY_LABEL.replace(/[./]/g, '\\$&')}: "(0|[1-9]\\d*)"$`, 'gm');

/** Where the block that starts at `from` ends: the first line not empty, not a comment and indented `indent` spaces or less (the text's end when none is). */
function blockEnd(text: string, from: number, indent: number): number {
  let at = from;
  while (at < text.length) {
    let spaces = 0;
    while (text.charCodeAt(at + spaces) === 32) spaces++;
    const next = text.charCodeAt(at + spaces);
    // A comment line ends no block, wherever it is indented.
    if (next !== 10 && next !== 35 && spaces <= indent) return at;
    const newline = text.indexOf('\n', at);
    if (newline === -1) return text.length;
    at = newline + 1;
  }
  return text.length;
}

/**
 * {@link unlabel} by lines, as kyaml prints an object: `metadata:` at column
 * 0, its keys two spaces in, the labels' keys four. Lines indented exactly so
 * are keys of those maps: a scalar's further lines (block scalars, folded
 * quotes) sit deeper than its key, and a column-0 line inside a document is
 * a top-level key. Undefined when the text is not laid out so (the syntax
 * tree decides then).
 */
function unlabelByLines(document: string): { entry: number; text: string } | undefined {
  const metadata = document.startsWith('metadata:\n') ? 0 : document.indexOf('\nmetadata:\n') + 1;
  if (metadata === 0 && !document.startsWith('metadata:\n')) return undefined;
  const metadataKeys = metadata + 'metadata:\n'.length;
  const metadataEnd = blockEnd(document, metadataKeys, 0);
  const labelsLine = document.startsWith('  labels:\n', metadataKeys) ? metadataKeys : document.indexOf('\n  labels:\n', metadataKeys) + 1;
  if (labelsLine === 0 || labelsLine >= metadataEnd) return undefined;
  const items = labelsLine + '  labels:\n'.length;
  const labelsEnd = blockEnd(document, items, 2);
  const block = document.slice(items, labelsEnd);
  const found = [...block.matchAll(LABEL_ITEM)];
  if (found.length !== 1) return undefined;
  const [label] = found as [RegExpMatchArray];
  // Every other item of the map starts a line of its own four spaces in (a complex key with `? `): the label is alone when no other line does.
  const only = block.split('\n').filter((line) => /^ {4}[^ ]/.test(line)).length === 1;
  const from = only ? labelsLine : items + label.index!;
  const to = items + label.index! + label[0].length + 1;
  return { entry: Number(label[1]), text: document.slice(0, from) + document.slice(to) };
}

/**
 * `document` (one printed object) without the label: its entry and the text as
 * a separate build prints it. The label is found by lines where kyaml's layout
 * makes that certain, else by YAML's own syntax tree (the CST: no composing
 * into objects, which would cost more than the process saved), and what is
 * cut must be exactly the label's line (with `labels:` when nothing else is
 * left in that map: a build without the wrapper prints no labels there), as
 * kyaml prints it.
 */
export function unlabel(document: string): { entry: number; text: string } {
  return unlabelByLines(document) ?? unlabelBySyntax(document);
}

/** {@link unlabel} by the syntax tree. */
export function unlabelBySyntax(document: string): { entry: number; text: string } {
  const tokens = [...new Parser().parse(document)].filter((token) => token.type !== 'newline' && token.type !== 'space');
  const root = tokens.length === 1 && tokens[0]?.type === 'document' ? tokens[0].value : undefined;
  const metadata = itemOf(root, 'metadata');
  const labels = itemOf(metadata?.value, 'labels');
  const label = itemOf(labels?.value, BATCH_ENTRY_LABEL);
  if (root?.type !== 'block-map' || root.indent !== 0 || labels?.value?.type !== 'block-map' || label?.key === undefined || label.key === null) {
    throw new Error('an object of the combined build carries no batch label where the wrapper puts it');
  }
  const only = labels.value.items.length === 1;
  const from = lineStart(document, only ? (labels.key as CST.SourceToken).offset : label.key.offset);
  const value = label.value;
  if (value?.type !== 'double-quoted-scalar') throw new Error('the batch label is not printed as the wrapper writes it');
  const to = lineEnd(document, value.offset + value.source.length);
  const removed = (only ? LABELS_AND_LABEL_LINES : LABEL_LINE).exec(document.slice(from, to));
  if (removed?.[1] === undefined) throw new Error('the batch label is not printed on a line of its own');
  return { entry: Number(removed[1]), text: document.slice(0, from) + document.slice(to) };
}

/**
 * Splits the output of a combined build of `count` entries into each entry's
 * output, as a build of its directory alone prints it.
 * @throws Error when the output is not what the wrappers make (then build separately)
 */
export function splitBatchOutput(output: string, count: number): string[] {
  const outputs: string[][] = Array.from({ length: count }, () => []);
  if (output !== '') {
    if (!output.endsWith('\n')) throw new Error('combined kustomize output does not end a line');
    // kyaml prints `---` between objects at the start of a line; an object's own lines are indented or keys.
    for (const document of output.split(/^---\n/m)) {
      const { entry, text } = unlabel(document);
      const into = outputs[entry];
      if (into === undefined) throw new Error(`the combined build yielded an object of entry ${entry}, which was not asked for`);
      into.push(text);
    }
  }
  return outputs.map((documents) => documents.join('---\n'));
}
