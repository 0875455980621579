/**
 * Multi-document YAML → plain objects, for both kustomize output and raw
 * files in the tree. Parsed with the `yaml` package's default (YAML 1.2 core)
 * schema, which is what kustomize's output is written for.
 */
import { parseAllDocuments } from 'yaml';

/** The documents of one YAML text. */
export interface ManifestDocuments {
  /** Non-empty documents as plain values, in order. */
  readonly documents: readonly unknown[];
  /** The first syntax error, as one line, when the text is not valid YAML. */
  readonly error?: string;
}

/** Parses every document; an empty document (`---` alone, comments) is skipped. */
export function manifestDocuments(text: string): ManifestDocuments {
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
