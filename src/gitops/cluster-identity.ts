/**
 * Carrying the reference environment's files over to a new cluster: the
 * reference's name, domain and region are replaced as whole tokens, in one
 * pass so a replacement is never itself replaced again.
 */
import type { ClusterSpec } from '../model/cluster-spec.js';

/** Name, domain and region of a cluster (the reference's or the new one's). */
export type ClusterIdentity = Pick<ClusterSpec, 'name' | 'domain' | 'region'>;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// A token is bounded by anything that cannot continue a DNS label; a domain may
// be preceded by "." (a subdomain of it) but not followed by ".x" (a longer name).
function tokenPattern(values: readonly string[]): RegExp {
  const alternatives = [...values].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return new RegExp(`(?<![a-z0-9-])(?:${alternatives.join('|')})(?![a-z0-9-]|\\.[a-z0-9])`, 'g');
}

function changedPairs(from: ClusterIdentity, to: ClusterIdentity): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const field of ['domain', 'name', 'region'] as const) {
    if (from[field] !== to[field] && !pairs.has(from[field])) pairs.set(from[field], to[field]);
  }
  return pairs;
}

/** Replaces every whole-token occurrence of `from`'s identity in `text` with `to`'s. */
export function rewriteIdentity(text: string, from: ClusterIdentity, to: ClusterIdentity): string {
  const pairs = changedPairs(from, to);
  if (pairs.size === 0) return text;
  return text.replace(tokenPattern([...pairs.keys()]), (match) => pairs.get(match) ?? match);
}

/**
 * Which of `from`'s identity values (that differ from `to`'s) still occur in
 * `text` as whole tokens. Empty means nothing of the reference is left behind.
 */
export function identityLeftovers(text: string, from: ClusterIdentity, to: ClusterIdentity): string[] {
  const pairs = changedPairs(from, to);
  if (pairs.size === 0) return [];
  return [...new Set(text.match(tokenPattern([...pairs.keys()])) ?? [])].sort();
}
