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
import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, parseAllDocuments, type Pair, type YAMLMap } from 'yaml';

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

/** `document` (one printed object) without the label: its entry and the text as a separate build prints it. */
function unlabel(document: string): { entry: number; text: string } {
  const [parsed, ...more] = parseAllDocuments(document);
  if (parsed === undefined || more.length > 0 || !('contents' in parsed) || parsed.errors.length > 0) {
    throw new Error('combined kustomize output is not one document per object');
  }
  const metadata = isMap(parsed.contents) ? parsed.contents.get('metadata', true) : undefined;
  const labels = isMap(metadata) ? metadata.get('labels', true) : undefined;
  if (!isMap(metadata) || !isMap(labels)) throw new Error('an object of the combined build carries no batch label');
  const labelItems = (labels as YAMLMap).items as Pair[];
  const pair = labelItems.find((p) => isScalar(p.key) && p.key.value === BATCH_ENTRY_LABEL);
  const value = pair !== undefined && isScalar(pair.value) ? pair.value.value : undefined;
  if (pair === undefined || typeof value !== 'string' || !/^(0|[1-9]\d*)$/.test(value))
    throw new Error('an object of the combined build carries no batch label');
  // Only the label, and its `labels:` key when nothing else is left in it: a build without the wrapper prints no empty map there.
  const cut = labelItems.length === 1 ? (metadata.items as Pair[]).find((p) => isScalar(p.key) && p.key.value === 'labels') : pair;
  const from = (cut?.key as { range?: [number, number, number] } | undefined)?.range?.[0];
  const to = (cut?.value as { range?: [number, number, number] } | undefined)?.range?.[1];
  if (from === undefined || to === undefined) throw new Error('cannot locate the batch label in the combined output');
  const text = document.slice(0, lineStart(document, from)) + document.slice(lineEnd(document, Math.max(from, to - 1)));
  // The cut must have removed the label and nothing else.
  const expected = parsed.toJS() as { metadata: { labels?: Record<string, unknown> } };
  delete expected.metadata.labels?.[BATCH_ENTRY_LABEL];
  if (expected.metadata.labels !== undefined && Object.keys(expected.metadata.labels).length === 0) delete expected.metadata.labels;
  const [again, ...extra] = parseAllDocuments(text);
  if (again === undefined || extra.length > 0 || !('contents' in again) || again.errors.length > 0 || !isDeepStrictEqual(again.toJS(), expected)) {
    throw new Error('cutting the batch label out of the combined output changed the object');
  }
  return { entry: Number(value), text };
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
