/**
 * "Did you mean" for unknown fields. A typo such as `dependOn` is the most
 * common reason a field is unknown, and naming the intended field turns a
 * finding into a fix.
 */

/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length]!;
}

/**
 * The candidate closest to `name`, when it is close enough to be a plausible
 * typo (at most 2 edits, and fewer than half the name's length).
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of [...candidates].sort()) {
    const d = distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const limit = Math.min(2, Math.floor(name.length / 2));
  return bestDistance > 0 && bestDistance <= limit ? best : undefined;
}
