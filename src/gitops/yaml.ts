/**
 * Stable YAML serialization for generated manifests: same input, same bytes.
 * Long lines are never folded, so base64 ciphertexts stay on one line.
 */
import { Document, parseAllDocuments, type ToStringOptions } from 'yaml';
import type { Document as AnyDocument } from 'yaml';
import { ValidationError } from '../errors.js';
import { sharedYamlReading } from './shared-yaml-reading.js';

const OPTIONS: ToStringOptions = { lineWidth: 0, minContentWidth: 0, indent: 2 };

/** Serializes one object as a YAML document, with an optional leading comment. */
export function toYaml(value: unknown, comment?: string): string {
  const doc = new Document(value);
  if (comment)
    doc.commentBefore = comment
      .split('\n')
      .map((l) => ` ${l}`)
      .join('\n');
  return doc.toString(OPTIONS);
}

/** Serializes a YAML Document (keeping its comments and order). */
export function documentToYaml(doc: Document): string {
  return doc.toString(OPTIONS);
}

/**
 * A parsed document's plain value. Repository content is hostile input: an
 * alias bomb (a few lines that expand to gigabytes) is refused by the yaml
 * package's alias budget, and reported here as a validation error of `file`
 * instead of a crash.
 * @throws ValidationError naming `file`
 */
export function plainValueOf(doc: AnyDocument.Parsed | AnyDocument, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    if (error instanceof ReferenceError) throw aliasBomb(file);
    throw error;
  }
}

function aliasBomb(file: string): ValidationError {
  return new ValidationError([{ field: file, message: 'uses YAML aliases beyond any real manifest (an alias bomb)' }]);
}

/**
 * {@link parseYamlDocuments}' answer from the process's one reading of `text`
 * (shared-yaml-reading.ts): the same values, frozen, and the same errors.
 * @throws ValidationError naming `file` when the YAML is malformed
 */
export function sharedYamlDocuments(text: string, file: string): readonly unknown[] {
  const out: unknown[] = [];
  for (const { error, value, thrown } of sharedYamlReading(text)) {
    if (error !== undefined) throw new ValidationError([{ field: file, message: `invalid YAML: ${error.split('\n')[0]}` }]);
    if (thrown instanceof ReferenceError) throw aliasBomb(file);
    if (thrown !== undefined) throw thrown;
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
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
    const value: unknown = plainValueOf(doc, file);
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}
