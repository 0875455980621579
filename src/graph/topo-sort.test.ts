import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fluxGraphOf, refKey, type FluxNode } from './flux-graph.js';
import { CycleError, findCycles, topoSort } from './topo-sort.js';

/** A Flux Kustomization as written in `clusters/<name>/flux/<layer>.yaml`. */
function kustomization(name: string, dependsOn: readonly string[] = [], namespace = 'flux-system'): unknown {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace },
    spec: {
      interval: '10m',
      path: `./clusters/eu-prod-1/${name}`,
      prune: true,
      sourceRef: { kind: 'GitRepository', name: 'flux-system' },
      ...(dependsOn.length > 0 ? { dependsOn: dependsOn.map((d) => ({ name: d })) } : {}),
    },
  };
}

function nodesOf(...objects: unknown[]): readonly FluxNode[] {
  return fluxGraphOf(objects.map((object) => ({ object }))).nodes;
}

const names = (nodes: readonly FluxNode[]): string[] => nodes.map((n) => n.name);

describe('topoSort', () => {
  it('puts infrastructure before every layer that depends on it', () => {
    const nodes = nodesOf(
      kustomization('apps', ['infrastructure']),
      kustomization('database', ['infrastructure']),
      kustomization('cert-manager-config', ['infrastructure']),
      kustomization('infrastructure'),
    );
    assert.deepEqual(names(topoSort(nodes)), ['infrastructure', 'apps', 'cert-manager-config', 'database']);
  });

  it('orders every node after all of its dependencies in a deeper chain', () => {
    const nodes = nodesOf(kustomization('a', ['d', 'b']), kustomization('b', ['c']), kustomization('c'), kustomization('d', ['c']), kustomization('e'));
    const order = topoSort(nodes).map(refKey);
    for (const node of nodes) {
      for (const dep of node.dependsOn) assert.ok(order.indexOf(refKey(dep)) < order.indexOf(refKey(node)), `${dep.name} before ${node.name}`);
    }
    assert.equal(order.length, 5);
  });

  it('gives the same order whatever order the nodes arrive in', () => {
    const objects = [kustomization('apps', ['infrastructure']), kustomization('infrastructure'), kustomization('database', ['infrastructure'])];
    const forward = names(topoSort(nodesOf(...objects)));
    const backward = names(topoSort([...nodesOf(...objects)].reverse()));
    assert.deepEqual(backward, forward);
  });

  it('ignores a dependency on a Kustomization that is not in the graph', () => {
    const nodes = nodesOf(kustomization('apps', ['missing']));
    assert.deepEqual(names(topoSort(nodes)), ['apps']);
  });

  it('resolves a dependsOn without a namespace in the dependent’s own namespace', () => {
    const nodes = nodesOf(kustomization('apps', ['infrastructure'], 'tenants'), kustomization('infrastructure', [], 'tenants'));
    assert.deepEqual(topoSort(nodes).map(refKey), ['tenants/infrastructure', 'tenants/apps']);
  });

  it('names the whole loop when there is a cycle', () => {
    const nodes = nodesOf(kustomization('a', ['b']), kustomization('b', ['c']), kustomization('c', ['a']));
    assert.throws(
      () => topoSort(nodes),
      (error: unknown) =>
        error instanceof CycleError &&
        error.cycle.length === 4 &&
        error.cycle[0] === error.cycle[3] &&
        new Set(error.cycle).size === 3 &&
        /dependsOn cycle: .* -> .* -> .* -> /.test(error.message),
    );
  });

  it('reports a Kustomization that depends on itself', () => {
    assert.throws(
      () => topoSort(nodesOf(kustomization('a', ['a']))),
      (error: unknown) => error instanceof CycleError && error.cycle.join(' ') === 'flux-system/a flux-system/a',
    );
  });
});

describe('findCycles', () => {
  it('finds no cycle in the reference layering', () => {
    const nodes = nodesOf(
      kustomization('infrastructure'),
      kustomization('apps', ['infrastructure']),
      kustomization('database', ['infrastructure']),
      kustomization('cert-manager-config', ['infrastructure']),
    );
    assert.deepEqual(findCycles(nodes), []);
  });

  it('reports a loop once, rotated to its smallest key, in dependsOn direction', () => {
    const nodes = nodesOf(kustomization('c', ['a']), kustomization('a', ['b']), kustomization('b', ['c']), kustomization('d', ['a']));
    assert.deepEqual(findCycles(nodes), [['flux-system/a', 'flux-system/b', 'flux-system/c', 'flux-system/a']]);
  });

  it('finds a loop that shares nodes with a loop found before it', () => {
    // a→b→c→a and a→c→a share a and c; a search that marks c finished after the
    // first loop never sees the second.
    const nodes = nodesOf(kustomization('a', ['b', 'c']), kustomization('b', ['c']), kustomization('c', ['a']));
    assert.deepEqual(findCycles(nodes), [
      ['flux-system/a', 'flux-system/b', 'flux-system/c', 'flux-system/a'],
      ['flux-system/a', 'flux-system/c', 'flux-system/a'],
    ]);
  });

  it('finds separate loops and self-loops, and ignores absent dependencies', () => {
    const nodes = nodesOf(kustomization('x', ['y', 'gone']), kustomization('y', ['x']), kustomization('self', ['self']), kustomization('infrastructure'));
    assert.deepEqual(findCycles(nodes), [
      ['flux-system/self', 'flux-system/self'],
      ['flux-system/x', 'flux-system/y', 'flux-system/x'],
    ]);
  });

  it('reports a duplicated dependsOn entry once', () => {
    const nodes = nodesOf(kustomization('a', ['b', 'b']), kustomization('b', ['a']));
    assert.deepEqual(findCycles(nodes), [['flux-system/a', 'flux-system/b', 'flux-system/a']]);
  });

  it('stays fast on a long chain with many paths and no loop', () => {
    // A ladder where every node depends on the next two: exponentially many
    // paths, no loop. Johnson's blocking keeps this linear per start node.
    const objects = Array.from({ length: 200 }, (_, i) =>
      kustomization(`n${String(i).padStart(3, '0')}`, i < 198 ? [`n${String(i + 1).padStart(3, '0')}`, `n${String(i + 2).padStart(3, '0')}`] : []),
    );
    const started = performance.now();
    assert.deepEqual(findCycles(nodesOf(...objects)), []);
    assert.ok(performance.now() - started < 2000);
  });
});

describe('fluxGraphOf', () => {
  it('sorts nodes by namespace/name in code-unit order, independent of locale', () => {
    const nodes = nodesOf(kustomization('b'), kustomization('B'), kustomization('a'), kustomization('a', [], 'Z'));
    assert.deepEqual(nodes.map(refKey), ['Z/a', 'flux-system/B', 'flux-system/a', 'flux-system/b']);
  });
});
