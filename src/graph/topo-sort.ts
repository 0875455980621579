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
 * Finds every distinct dependency cycle (each reported once, rotated to start
 * at its smallest key).
 */
export function findCycles(nodes: readonly FluxNode[]): string[][] {
  const byKey = new Map(nodes.map((n) => [refKey(n), n]));
  const cycles = new Map<string, string[]>();
  const onPath: string[] = [];
  const done = new Set<string>();

  const walk = (key: string): void => {
    const at = onPath.indexOf(key);
    if (at >= 0) {
      const loop = onPath.slice(at);
      const min = loop.reduce((m, k, i) => (k < loop[m]! ? i : m), 0);
      const rotated = [...loop.slice(min), ...loop.slice(0, min)];
      cycles.set(rotated.join('\n'), [...rotated, rotated[0]!]);
      return;
    }
    if (done.has(key)) return;
    const node = byKey.get(key);
    if (!node) return;
    onPath.push(key);
    for (const dep of node.dependsOn) walk(refKey(dep));
    onPath.pop();
    done.add(key);
  };

  for (const key of [...byKey.keys()].sort()) walk(key);
  return [...cycles.values()];
}
