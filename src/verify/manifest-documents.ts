/**
 * Multi-document YAML → plain objects, for both kustomize output and raw
 * files in the tree. Read as the `yaml` package's default (YAML 1.2 core)
 * schema reads it, which is what kustomize's output is written for.
 */
import { sharedYamlReading } from '../gitops/shared-yaml-reading.js';
import { ParseMemo } from '../gitops/parse-memo.js';
import { plainDataDocuments } from './plain-data-yaml.js';

/** The documents of one YAML text. */
export interface ManifestDocuments {
  /** Non-empty documents as plain values, in order (shared with every caller that parsed the same text: frozen). */
  readonly documents: readonly unknown[];
  /** The first syntax error, as one line, when the text is not valid YAML. */
  readonly error?: string;
}

/**
 * Each document's text → its values. Most objects a verify parses are the same
 * text again: base/ as every cluster of a batch builds it, the first pass's
 * output in the second. 4 M characters of documents at most: a batch of 16
 * clusters keeps about 0.4 M of kustomize's output (530 documents, two of
 * three asked for again). The repository's files are kept apart: read by
 * another parser, their values could differ where the text is not valid YAML.
 * A file's parts are read through the process's one reading of each text
 * (shared-yaml-reading.ts), which keeps them itself.
 */
const BUILT = new ParseMemo<ManifestDocuments>(4 * 1024 * 1024);

/**
 * Where a text comes from: kustomize's output, written by its Go YAML encoder
 * (valid YAML, plain data), or a file of the repository (anything at all).
 */
export type DocumentSource = 'kustomize-output' | 'file';

/**
 * A document marker line: `---` at the start of a line with nothing after it.
 * At column 0 it ends a document whatever came before (YAML forbids it inside
 * any scalar or collection), so the text between two is one stream of its own.
 */
const MARKER_LINE = /^---[ \t]*(?:\n|$)/m;

/** A directive line (`%YAML 1.1`, `%TAG`): it applies to the document after the next marker, so such a stream is parsed whole. */
const DIRECTIVE_LINE = /^%/m;

/**
 * Parses every document; an empty document (`---` alone, comments) is
 * skipped. kustomize's output is read by js-yaml where it answers for the
 * text (plain-data-yaml.ts: a quarter of the CPU, the same values for valid
 * YAML); a file by the yaml package, whose errors are the findings.
 */
export function manifestDocuments(text: string, source: DocumentSource = 'file'): ManifestDocuments {
  if (DIRECTIVE_LINE.test(text)) return parseStream(text);
  const read = source === 'kustomize-output' ? (part: string) => BUILT.get(part, readBuiltPart) : parseStream;
  const documents: unknown[] = [];
  for (const part of text.split(MARKER_LINE)) {
    const parsed = read(part);
    // The whole text's first error, worded as a parse of it all words it (line numbers included).
    if (parsed.error !== undefined) return parseStream(text);
    documents.push(...parsed.documents);
  }
  return { documents };
}

/** A part of kustomize's output: js-yaml's reading where it answers for the text, the yaml package's otherwise. */
function readBuiltPart(part: string): ManifestDocuments {
  const documents = plainDataDocuments(part);
  return documents !== undefined ? { documents } : parseStream(part);
}

/** The stream parsed as one by the yaml package, neither split nor kept: what {@link manifestDocuments} answers. */
export function parseStream(text: string): ManifestDocuments {
  const documents: unknown[] = [];
  for (const { error, value, thrown } of sharedYamlReading(text)) {
    if (error !== undefined) return { documents, error: error.split('\n')[0] ?? 'invalid YAML' };
    // The yaml package refuses an alias bomb rather than expand it.
    if (thrown !== undefined) return { documents, error: 'uses YAML aliases beyond any real manifest (an alias bomb)' };
    if (value !== null && value !== undefined) documents.push(value);
  }
  return { documents };
}
