/** Parsed YAML and JSON are `unknown`; this is the one narrowing every reader of them starts from. */

/** True for a plain mapping (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
