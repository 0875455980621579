/**
 * kustomize's output read with js-yaml, for a quarter of the `yaml` package's
 * CPU, where both readers give the same values; `undefined` where they might
 * not, and the caller reads the text with the `yaml` package as before. The
 * claim holds for valid YAML, which kustomize's Go encoder writes: on some
 * invalid texts (junk after a multi-line quoted scalar) js-yaml answers where
 * the `yaml` package reports an error, so a repository's files, which may be
 * anything, are not read here.
 *
 * They agree on plain data: block and flow collections, the three quoted and
 * two block scalar styles, and plain scalars resolved by YAML 1.2's core
 * schema, which {@link CORE_AS_YAML} gives js-yaml exactly as the `yaml`
 * package (2.x) resolves it. What is not plain data is left to the `yaml`
 * package:
 * - anchors, and with them aliases (`&a`, `*a`), seen as js-yaml reads them:
 *   the `yaml` package counts alias expansions and refuses a bomb, js-yaml
 *   shares nodes and counts nothing;
 * - explicit (`? `) and empty or null keys, directives, the non-specific
 *   tag (`! 12`) and tabs, found by their indicators in the text (a false alarm only
 *   costs the slower parse): js-yaml names a null key "null", the `yaml`
 *   package "".
 * - a document that is not a mapping, as kustomize's never are.
 * Any text js-yaml refuses (an unknown tag, a duplicate key, a syntax error)
 * is also left to the `yaml` package, whose errors are the ones reported; a
 * known tag (`!!str`, `!!int`) resolves in both as in {@link CORE_AS_YAML}.
 * kustomize writes none of these: its output is plain data, anchors inflated.
 */
import { FAILSAFE_SCHEMA, type State, Type, loadAll } from 'js-yaml';

const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/**
 * YAML 1.2's core schema as the `yaml` package resolves plain scalars
 * (`yaml/dist/schema/core`): its patterns, and its numbers from `parseInt` and
 * `parseFloat`. js-yaml's own CORE_SCHEMA differs at the edges (`0b1`, `-.5`).
 * One type a tag: js-yaml keeps the last of several.
 */
const CORE_AS_YAML = FAILSAFE_SCHEMA.extend({
  implicit: [
    new Type('tag:yaml.org,2002:null', { kind: 'scalar', resolve: (s: string) => NULL.test(s), construct: () => null }),
    new Type('tag:yaml.org,2002:bool', { kind: 'scalar', resolve: (s: string) => BOOL.test(s), construct: (s: string) => s[0] === 't' || s[0] === 'T' }),
    new Type('tag:yaml.org,2002:int', {
      kind: 'scalar',
      resolve: (s: string) => INT_OCT.test(s) || INT.test(s) || INT_HEX.test(s),
      construct: (s: string) => (INT_OCT.test(s) ? parseInt(s.slice(2), 8) : INT_HEX.test(s) ? parseInt(s.slice(2), 16) : parseInt(s, 10)),
    }),
    new Type('tag:yaml.org,2002:float', {
      kind: 'scalar',
      resolve: (s: string) => FLOAT_NAN.test(s) || FLOAT_EXP.test(s) || FLOAT.test(s),
      construct: (s: string) => (FLOAT_NAN.test(s) ? (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? -Infinity : Infinity) : parseFloat(s)),
    }),
  ],
});

/**
 * An indicator of what is not plain data: an explicit key, an empty or null
 * key, a directive, the non-specific tag; and a compact nested sequence whose
 * last item is empty (`- -`), after which js-yaml reads the next item into
 * the inner sequence; a tab, which the yaml package refuses in places js-yaml
 * takes (a tab-indented line after a block scalar).
 */
const NOT_PLAIN_DATA = /\t|(?:^|\s)\?(?:\s|$)|(?:^|[\s{[,])(?:~|[Nn]ull|NULL)?:(?:\s|$)|^%|(?:^|[\s[{,])!(?:\s|$)|^[ \t]*-(?:[ \t]+-)+[ \t]*$/m;

/** Thrown from js-yaml's listener to stop at the first anchor. */
class AnchorFound extends Error {}

/** js-yaml's parser state as its listener sees it: `anchor` is the node's own (js-yaml 4 keeps it there; the typings omit it). */
type StateWithAnchor = State & { readonly anchor?: string | null };

function refuseAnchors(eventType: 'open' | 'close', state: State): void {
  if (eventType === 'close' && ((state as StateWithAnchor).anchor ?? null) !== null) throw new AnchorFound();
}

/**
 * The non-empty documents of `text` as the `yaml` package's core schema reads
 * them, or `undefined` when this reader does not answer for the text (then
 * read it with the `yaml` package).
 */
export function plainDataDocuments(text: string): unknown[] | undefined {
  if (NOT_PLAIN_DATA.test(text)) return undefined;
  let documents: unknown[];
  try {
    documents = loadAll(text, undefined, { schema: CORE_AS_YAML, listener: refuseAnchors });
  } catch {
    return undefined;
  }
  const values = documents.filter((document) => document !== null && document !== undefined);
  // kustomize writes one object a document. js-yaml reads a top-level block
  // scalar with an indentation indicator (`|1-`) differently, past a `---`.
  return values.every((value) => typeof value === 'object' && !Array.isArray(value)) ? values : undefined;
}
