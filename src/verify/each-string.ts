import { isRecord } from '../model/is-record.js';

/** Calls `visit` with every key and string value of a parsed YAML value, depth first (Flux substitutes, and the Flux Operator templates, an object's whole text). */
export function eachString(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const item of value) eachString(item, visit);
  else if (isRecord(value)) {
    for (const [key, child] of Object.entries(value)) {
      visit(key);
      eachString(child, visit);
    }
  }
}
