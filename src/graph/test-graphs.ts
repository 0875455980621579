/**
 * Test support: Flux graphs built from Kustomizations shaped like the ones the
 * generator writes into `clusters/eu-prod-1/flux/`, for the renderers' tests.
 * Pure, like the rest of the folder.
 */
import { fluxGraphOf, type FluxGraph } from './flux-graph.js';

/** One layer of a test cluster: its Kustomization's name and the fields the graph reads. */
export interface TestLayer {
  readonly name: string;
  readonly dependsOn?: readonly string[];
  /** Each gets `apiVersion: helm.toolkit.fluxcd.io/v2`. */
  readonly healthChecks?: readonly { kind: string; name: string; namespace: string }[];
  readonly wait?: boolean;
}

/**
 * The graph of flux-system Kustomizations, one per layer, each with `path:
 * ./clusters/eu-prod-1/<name>` and found in `clusters/eu-prod-1/flux/<name>.yaml`.
 */
export function clusterGraph(layers: readonly TestLayer[]): FluxGraph {
  return fluxGraphOf(
    layers.map((layer) => ({
      file: `clusters/eu-prod-1/flux/${layer.name}.yaml`,
      object: {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: layer.name, namespace: 'flux-system' },
        spec: {
          interval: '10m',
          retryInterval: '1m',
          timeout: '5m',
          prune: true,
          path: `./clusters/eu-prod-1/${layer.name}`,
          sourceRef: { kind: 'GitRepository', name: 'flux-system' },
          postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'cluster-config' }] },
          ...(layer.dependsOn ? { dependsOn: layer.dependsOn.map((name) => ({ name })) } : {}),
          ...(layer.healthChecks ? { healthChecks: layer.healthChecks.map((h) => ({ apiVersion: 'helm.toolkit.fluxcd.io/v2', ...h })) } : {}),
          ...(layer.wait ? { wait: true } : {}),
        },
      },
    })),
  );
}
