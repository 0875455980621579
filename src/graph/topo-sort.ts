/**
 * Dependency ordering for Flux Kustomizations. Flux itself applies in
 * dependsOn order; we compute the same order to draw it and to find cycles
 * before Flux would stall on them.
 */
import { refKey, type FluxNode } from './flux-graph.js';

/** A dependency loop, named from its first node back to that node. */
export class CycleError extends Error {
  constructor(readonly cycle: readonly string[]) {
    super(`dependsOn cycle: ${cycle.join(' -> ')}`);
    this.name = 'CycleError';
  }
}

/**
 * Orders nodes so that every node comes after all of its dependencies.
 * Ties are broken by name so the output is deterministic. Dependencies on
 * nodes that are not in the list are ignored here (verification reports them).
 *
 * @throws CycleError naming the whole loop when there is a cycle
 */
export function topoSort(nodes: readonly FluxNode[]): FluxNode[] {
  const byKey = new Map(nodes.map((n) => [refKey(n), n]));
  const state = new Map<string, 'visiting' | 'done'>();
  const order: FluxNode[] = [];
  const stack: string[] = [];

  const visit = (key: string): void => {
    const seen = state.get(key);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const start = stack.indexOf(key);
      throw new CycleError([...stack.slice(start), key]);
    }
    const node = byKey.get(key);
    if (!node) return;
    state.set(key, 'visiting');
    stack.push(key);
    for (const dep of [...node.dependsOn].map(refKey).sort()) visit(dep);
    stack.pop();
    state.set(key, 'done');
    order.push(node);
  };

  for (const key of [...byKey.keys()].sort()) visit(key);
  return order;
}

/**
 * Finds every distinct dependency cycle (every elementary loop, each reported
 * once, rotated to start at its smallest key and closed by repeating it).
 * A loop reads in dependsOn direction: `['a', 'b', 'a']` means a dependsOn b
 * and b dependsOn a. Loops come out sorted by their starting key, then in
 * sorted dependsOn order. Dependencies on absent nodes are ignored.
 *
 * A plain depth-first search that marks nodes finished misses loops that share
 * a node with a loop found earlier (a→b→c→a hides a→c→a), so this is Johnson's
 * algorithm: for each start key in order, enumerate the loops whose smallest
 * key it is, blocking nodes that cannot lead back to the start so that the
 * work stays linear in the graph between two loops found.
 * See https://doi.org/10.1137/0204007.
 */
export function findCycles(nodes: readonly FluxNode[]): string[][] {
  const keys = [...new Set(nodes.map(refKey))].sort();
  const rank = new Map(keys.map((k, i) => [k, i]));
  const byKey = new Map(nodes.map((n) => [refKey(n), n]));
  const successors = new Map<string, string[]>(keys.map((k) => [k, [...new Set(byKey.get(k)!.dependsOn.map(refKey))].filter((d) => rank.has(d)).sort()]));
  const cycles: string[][] = [];

  keys.forEach((start, startRank) => {
    // Only nodes not smaller than the start: loops through a smaller node were
    // found when that node was the start.
    const inScope = (key: string): boolean => rank.get(key)! >= startRank;
    const blocked = new Set<string>();
    const blockedBy = new Map<string, Set<string>>();
    const path: string[] = [];

    const unblock = (key: string): void => {
      blocked.delete(key);
      const waiting = blockedBy.get(key);
      blockedBy.delete(key);
      for (const w of waiting ?? []) if (blocked.has(w)) unblock(w);
    };

    const circuit = (key: string): boolean => {
      let closed = false;
      path.push(key);
      blocked.add(key);
      const next = successors.get(key)!.filter(inScope);
      for (const dep of next) {
        if (dep === start) {
          cycles.push([...path, start]);
          closed = true;
        } else if (!blocked.has(dep) && circuit(dep)) {
          closed = true;
        }
      }
      if (closed) {
        unblock(key);
      } else {
        for (const dep of next) {
          const waiting = blockedBy.get(dep) ?? new Set<string>();
          waiting.add(key);
          blockedBy.set(dep, waiting);
        }
      }
      path.pop();
      return closed;
    };

    circuit(start);
  });
  return cycles;
}
