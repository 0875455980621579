/**
 * Stable YAML serialization for generated manifests: same input, same bytes.
 * Long lines are never folded, so base64 ciphertexts stay on one line.
 */
import { Document, parseAllDocuments, stringify, type ToStringOptions } from 'yaml';
import { ValidationError } from '../errors.js';

const OPTIONS: ToStringOptions = { lineWidth: 0, minContentWidth: 0, indent: 2 };

/** Serializes one object as a YAML document, with an optional leading comment. */
export function toYaml(value: unknown, comment?: string): string {
  const doc = new Document(value);
  if (comment) doc.commentBefore = comment.split('\n').map((l) => ` ${l}`).join('\n');
  return doc.toString(OPTIONS);
}

/** Serializes a YAML Document (keeping its comments and order). */
export function documentToYaml(doc: Document): string {
  return doc.toString(OPTIONS);
}

/** Serializes a plain value without document markers. */
export function stringifyYaml(value: unknown): string {
  return stringify(value, OPTIONS);
}

/**
 * Parses every document of a YAML stream into plain values, dropping empty documents.
 * @throws ValidationError naming `file` when the YAML is malformed
 */
export function parseYamlDocuments(text: string, file: string): unknown[] {
  const docs = parseAllDocuments(text);
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new ValidationError([{ field: file, message: `invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}` }]);
    }
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}
