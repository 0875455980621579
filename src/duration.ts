/**
 * Durations as operators write them (`90s`, `15m`, `1h30m`, or plain seconds),
 * the same shape Flux and Kubernetes use.
 */
import { ValidationError } from './errors.js';

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a duration into milliseconds.
 * @throws ValidationError naming `field` when the text is not a positive duration
 */
export function parseDuration(text: string, field: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const total = parts.reduce((sum, [, value, unit]) => sum + Number(value) * UNITS[unit!]!, 0);
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== trimmed || total <= 0) {
    throw new ValidationError([{ field, message: `${JSON.stringify(text)} is not a duration such as 90s, 15m or 1h30m` }]);
  }
  return total;
}
