/**
 * Multi-document YAML → plain objects, for both kustomize output and raw
 * files in the tree. Parsed with the `yaml` package's default (YAML 1.2 core)
 * schema, which is what kustomize's output is written for.
 */
import { parseAllDocuments } from 'yaml';
import { ParseMemo } from '../gitops/parse-memo.js';

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
 * clusters keeps about 0.4 M (530 documents, two of three asked for again).
 */
const DOCUMENTS = new ParseMemo<ManifestDocuments>(4 * 1024 * 1024);

/**
 * A document marker line: `---` at the start of a line with nothing after it.
 * At column 0 it ends a document whatever came before (YAML forbids it inside
 * any scalar or collection), so the text between two is one stream of its own.
 */
const MARKER_LINE = /^---[ \t]*(?:\n|$)/m;

/** A directive line (`%YAML 1.1`, `%TAG`): it applies to the document after the next marker, so such a stream is parsed whole. */
const DIRECTIVE_LINE = /^%/m;

/** Parses every document; an empty document (`---` alone, comments) is skipped. */
export function manifestDocuments(text: string): ManifestDocuments {
  if (DIRECTIVE_LINE.test(text)) return parseStream(text);
  const documents: unknown[] = [];
  for (const part of text.split(MARKER_LINE)) {
    const parsed = DOCUMENTS.get(part, parseStream);
    // The whole text's first error, worded as a parse of it all words it (line numbers included).
    if (parsed.error !== undefined) return parseStream(text);
    documents.push(...parsed.documents);
  }
  return { documents };
}

/** The stream parsed as one, neither split nor kept: what {@link manifestDocuments} answers. */
export function parseStream(text: string): ManifestDocuments {
  const documents: unknown[] = [];
  for (const document of parseAllDocuments(text)) {
    const [first] = document.errors;
    if (first !== undefined) return { documents, error: first.message.split('\n')[0] ?? 'invalid YAML' };
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: 100 });
    } catch {
      // The yaml package refuses an alias bomb rather than expand it.
      return { documents, error: 'uses YAML aliases beyond any real manifest (an alias bomb)' };
    }
    if (value !== null && value !== undefined) documents.push(value);
  }
  return { documents };
}
