/**
 * Flux's postBuild substitution, done on the parsed object where that is
 * certain to give what the text route gives (print the object as YAML,
 * substitute the text, parse it again; substitution.ts): every string that
 * holds `${` is one the yaml package prints plain, on one line, with each
 * reference closed inside it, and what the substitution leaves is again a
 * plain scalar with nothing in it that could start structure (no space, no
 * quote, no `#`, no flow or block indicator). Such a string's text is exactly
 * its value, so substituting the text substitutes the value, and parsing it
 * again only retypes it (`${replicas}` → 3, `${enabled}` → true, nothing →
 * null) as the yaml package's core schema resolves a plain scalar. Anything
 * else — a key with `$`, a quoted or multi-line string, a value that brings
 * spaces or colons — is left to the text route, which knows the whole story.
 * (Where the yaml package reads a string back other than it printed it, as
 * `" \n"`, the object route keeps the string: the loss is the package's, not
 * Flux's substitution.)
 *
 * Printing and parsing a large object again was the dearest step of a verify.
 */
import { parse } from 'yaml';
import { isRecord } from '../model/is-record.js';
import { substituteVariables } from './substitute-variables.js';

/** A string the yaml package prints plain as it is: no space, quote, comment or leading indicator; a colon only inside. */
const PLAIN_BEFORE = /^[A-Za-z0-9_./=+$][A-Za-z0-9_./=@+:,${}-]*(?<!:)$/;

/** A substituted scalar that parses back as one plain scalar: as above, with no `$` or brace left. */
const PLAIN_AFTER = /^[A-Za-z0-9_./=+][A-Za-z0-9_./=@+:,-]*(?<!:)$/;

/** What could resolve to something else than a string in the core schema (null, booleans, numbers) starts so. */
const MAYBE_TYPED = /^[-+.0-9~nNtTfF]/;

/** What substitution leaves when it cannot be done on the object. */
const UNSURE = Symbol('unsure');

/**
 * `object` as Flux applies it after substituting `values`, or undefined when
 * only the text route can tell. Unchanged parts are shared with `object`.
 */
export function substituteScalars(object: unknown, values: ReadonlyMap<string, string>): { readonly value: unknown } | undefined {
  const value = substituteIn(object, values);
  return value === UNSURE ? undefined : { value };
}

function substituteIn(value: unknown, values: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return value.includes('${') ? substituteScalar(value, values) : value;
  if (Array.isArray(value)) {
    let changed: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = substituteIn(value[i], values);
      if (next === UNSURE) return UNSURE;
      if (next !== value[i]) (changed ??= [...value])[i] = next;
    }
    return changed ?? value;
  }
  if (isRecord(value)) {
    let changed: Record<string, unknown> | undefined;
    for (const [key, child] of Object.entries(value)) {
      // A key is printed, and substituted, too: its text decides where its value goes.
      if (key.includes('$')) return UNSURE;
      const next = substituteIn(child, values);
      if (next === UNSURE) return UNSURE;
      if (next !== child) (changed ??= { ...value })[key] = next;
    }
    return changed ?? value;
  }
  return value;
}

function substituteScalar(text: string, values: ReadonlyMap<string, string>): unknown {
  if (!PLAIN_BEFORE.test(text)) return UNSURE;
  const substituted = substituteVariables(text, values);
  // A `${` left open (or not a reference) would meet a brace of another scalar in the printed text.
  if (substituted === '') return null;
  if (!PLAIN_AFTER.test(substituted)) return UNSURE;
  return MAYBE_TYPED.test(substituted) ? parse(substituted) : substituted;
}
