/** Parsed YAML is `unknown`; this is the one narrowing every verify check starts from. */

/** True for a plain mapping (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
