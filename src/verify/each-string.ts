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

/** Whether `test` holds for some key or string value of a parsed YAML value; stops at the first. */
export function anyString(value: unknown, test: (text: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (Array.isArray(value)) return value.some((item) => anyString(item, test));
  if (isRecord(value)) return Object.entries(value).some(([key, child]) => test(key) || anyString(child, test));
  return false;
}
