/**
 * Renders a text as Flux postBuild substitution would, so the objects
 * verification validates are the ones Flux applies (`replicas: ${replicas}`
 * is an integer after substitution, a string before).
 */
import { variableTokens } from './variable-references.js';

/**
 * Replaces every `${var}` with its value and every `$${...}` escape with
 * `${...}`. An undefined variable without a default becomes the empty string,
 * as in Flux without strict substitution (the checker reports it separately).
 * Operators other than defaults (`^^`, substrings) are rendered as the plain
 * value: close enough for schema checks, which is all this is for.
 */
export function substituteVariables(text: string, values: ReadonlyMap<string, string>): string {
  const tokens = variableTokens(text);
  if (tokens.length === 0) return text;
  let out = '';
  let at = 0;
  for (const token of tokens) {
    out += text.slice(at, token.start);
    if (token.kind === 'escape') {
      out += text.slice(token.start + 1, token.end);
    } else {
      const value = values.get(token.name);
      // `:-`/`:=` also apply to an empty value; `-`/`=` only to an unset one.
      const emptyCounts = token.operator.startsWith(':');
      if (token.fallback !== undefined && (value === undefined || (emptyCounts && value === ''))) out += token.fallback;
      else out += value ?? '';
    }
    at = token.end;
  }
  return out + text.slice(at);
}
