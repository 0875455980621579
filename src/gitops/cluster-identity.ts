/**
 * Carrying the reference environment's files over to a new cluster: the
 * reference's name, domain and region are replaced as whole tokens, in one
 * pass so a replacement is never itself replaced again.
 */
import type { ClusterSpec } from '../model/cluster-spec.js';

/** Name, domain and region of a cluster (the reference's or the new one's). */
export type ClusterIdentity = Pick<ClusterSpec, 'name' | 'domain' | 'region'>;

const FIELDS = ['domain', 'name', 'region'] as const;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// A token is bounded by anything that cannot continue a DNS label. A domain may
// be preceded by "." (a subdomain of it) but not followed by ".x" (that is a
// longer, different name). A name or a region may sit inside a DNS name on
// either side: `s3.eu-central-1.amazonaws.com` carries the region,
// `db.development.svc` the name.
function tokenPattern(tokens: readonly { value: string; domain: boolean }[]): RegExp {
  const alternatives = [...tokens]
    .sort((a, b) => b.value.length - a.value.length)
    .map(({ value, domain }) => `${escapeRegExp(value)}${domain ? '(?![a-z0-9-]|\\.[a-z0-9])' : '(?![a-z0-9-])'}`);
  return new RegExp(`(?<![a-z0-9-])(?:${alternatives.join('|')})`, 'g');
}

/**
 * Every identity value of `from` as a token, mapped to its replacement. Values
 * that do not change map to themselves, so they still win over a shorter value
 * inside them (the unchanged domain `dev.example.com` is not rewritten because
 * the name `dev` changes).
 */
function tokensOf(
  from: ClusterIdentity,
  to: ClusterIdentity,
): { pairs: Map<string, string>; tokens: { value: string; domain: boolean }[]; changed: Set<string> } {
  const pairs = new Map<string, string>();
  const tokens: { value: string; domain: boolean }[] = [];
  const changed = new Set<string>();
  for (const field of FIELDS) {
    const value = from[field];
    if (value === '' || pairs.has(value)) continue;
    pairs.set(value, to[field]);
    tokens.push({ value, domain: field === 'domain' });
    if (to[field] !== value) changed.add(value);
  }
  return { pairs, tokens, changed };
}

/** Replaces every whole-token occurrence of `from`'s identity in `text` with `to`'s. */
export function rewriteIdentity(text: string, from: ClusterIdentity, to: ClusterIdentity): string {
  const { pairs, tokens, changed } = tokensOf(from, to);
  if (changed.size === 0) return text;
  return text.replace(tokenPattern(tokens), (match) => pairs.get(match) ?? match);
}

/**
 * Which of `from`'s identity values (that differ from `to`'s) still occur in
 * `text` as whole tokens. Empty means nothing of the reference is left behind.
 *
 * Occurrences inside one of `to`'s own values are the new identity, not a
 * leftover: a new domain `eu.dev.example.com` under the reference's
 * `dev.example.com` contains the old domain by construction.
 */
export function identityLeftovers(text: string, from: ClusterIdentity, to: ClusterIdentity): string[] {
  const { tokens, changed } = tokensOf(from, to);
  if (changed.size === 0) return [];
  let masked = text;
  for (const value of new Set(FIELDS.map((f) => to[f]))) {
    if (value !== '' && [...changed].some((old) => value.includes(old))) masked = masked.replaceAll(value, '\u0000'.repeat(value.length));
  }
  const found = masked.match(tokenPattern(tokens)) ?? [];
  return [...new Set(found.filter((m) => changed.has(m)))].sort();
}
