/**
 * The `${var}` grammar of Flux postBuild substitution (fluxcd/pkg/envsubst, a
 * fork of drone/envsubst without the brace-less `$var` form). One tokenizer
 * serves both the checker and the renderer so they cannot disagree.
 * See https://fluxcd.io/flux/components/kustomize/kustomizations/#post-build-variable-substitution
 */

/** One `${...}` use, or one `$${...}` escape, in a text. */
export type VariableToken =
  | {
      readonly kind: 'reference';
      /** The variable, `[_a-zA-Z][_a-zA-Z0-9]*`. */
      readonly name: string;
      /** What follows the name inside the braces (`:=default`, `^^`, …), or ''. */
      readonly operator: string;
      /**
       * The default text of `${var:=d}`, `${var:-d}`, `${var=d}`, `${var-d}`:
       * Flux uses it when the variable is undefined, so such a use needs no definition.
       */
      readonly fallback?: string;
      /** Offsets of the whole `${...}`. */
      readonly start: number;
      readonly end: number;
    }
  | {
      /** `$${...}`, which Flux renders back to `${...}` and never substitutes. */
      readonly kind: 'escape';
      readonly start: number;
      readonly end: number;
    };

/**
 * The escape alternative comes first so an escaped reference is consumed
 * whole: stripping escapes before looking for uses, as the checker must, or
 * every Grafana dashboard would be a false positive.
 */
const TOKEN = /\$\$\{[^}]*\}|\$\{([^}]*)\}/g;
const NAMED = /^([_a-zA-Z][_a-zA-Z0-9]*)([\s\S]*)$/;
const DEFAULT_OPERATOR = /^:?[-=]([\s\S]*)$/;

/**
 * Every reference and escape in `text`, in order. A `${...}` whose content
 * does not start with a valid name is neither (it is not a variable to Flux).
 */
export function variableTokens(text: string): VariableToken[] {
  const tokens: VariableToken[] = [];
  if (!text.includes('${')) return tokens;
  for (const match of text.matchAll(TOKEN)) {
    const start = match.index;
    const end = start + match[0].length;
    const inner = match[1];
    if (inner === undefined) {
      tokens.push({ kind: 'escape', start, end });
      continue;
    }
    const named = NAMED.exec(inner);
    if (!named) continue;
    const [, name = '', operator = ''] = named;
    const withDefault = DEFAULT_OPERATOR.exec(operator);
    tokens.push({
      kind: 'reference',
      name,
      operator,
      ...(withDefault ? { fallback: withDefault[1] ?? '' } : {}),
      start,
      end,
    });
  }
  return tokens;
}
