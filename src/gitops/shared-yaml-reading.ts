/**
 * A YAML stream as the `yaml` package reads it, once per text for the whole
 * process, for the readers that only look at values: a kustomization.yaml
 * was parsed by four of them in one verified run (the generator's layer
 * overlays, verify's path confinement, its build inputs and its manifest
 * reading), and half of a runner's YAML parses were such repeats (81 of 156).
 *
 * Each reader keeps its own rules over the one reading: which errors it
 * reports, and what it does where the package would not expand the aliases.
 * The values are shared, so frozen (parse-memo.ts).
 */
import { parseAllDocuments } from 'yaml';
import { ParseMemo } from './parse-memo.js';

/** One document of the stream. */
export interface YamlDocumentReading {
  /** The message of the first error the package reported in this document. */
  readonly error?: string;
  /** `toJS({ maxAliasCount: 100 })` of the document, unless it threw. */
  readonly value?: unknown;
  /** What `toJS` threw instead of a value: a ReferenceError when the aliases expand past the budget (a bomb) or name no anchor. */
  readonly thrown?: unknown;
}

/** Texts by their readings: 8 M characters of texts at most, the least recently used dropped first. */
const READINGS = new ParseMemo<readonly YamlDocumentReading[]>(8 * 1024 * 1024);

function read(text: string): YamlDocumentReading[] {
  return parseAllDocuments(text).map((doc) => {
    const error = doc.errors[0]?.message;
    try {
      return { ...(error !== undefined ? { error } : {}), value: doc.toJS({ maxAliasCount: 100 }) as unknown };
    } catch (thrown) {
      return { ...(error !== undefined ? { error } : {}), thrown };
    }
  });
}

/** Every document of `text` (empty ones included), read once per text; the values are frozen. */
export function sharedYamlReading(text: string): readonly YamlDocumentReading[] {
  return READINGS.get(text, read);
}
