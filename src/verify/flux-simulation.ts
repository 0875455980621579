/**
 * verify as a simulation of Flux's apply order on a fresh cluster: the root
 * sync first, then each Kustomization once everything it depends on is
 * Ready. Each check is one concept in its own file; this runs them over one
 * cluster's built (and substituted) Kustomizations and gathers what they find.
 */
import type { PlatformPrerequisites } from '../gitops/platform-prerequisites.js';
import type { AppliedKustomization } from './applied-object.js';
import { checkAlertProviders } from './alert-providers.js';
import { checkBootstrapPrerequisites } from './bootstrap-prerequisites.js';
import { checkCrdAvailability } from './crd-availability.js';
import { checkExternalArtifactProducer } from './external-artifact-producer.js';
import { checkFluxMetricRules } from './flux-metric-rules.js';
import { checkGatewayFluxIngress } from './gateway-flux-ingress.js';
import type { Finding } from './finding.js';
import { checkHealthCheckTargets } from './health-check-targets.js';
import { checkMonitorPorts } from './monitor-ports.js';
import { checkSealedSecretScopes } from './sealed-secret-scope.js';
import { checkRouteBackends } from './route-backends.js';
import { checkReleaseOptions } from './release-options.js';
import { checkServiceHosts } from './service-hosts.js';
import { checkShardLabels } from './shard-labels.js';
import { checkWorkloadReferences } from './workload-references.js';

export type { AppliedKustomization } from './applied-object.js';

/** One cluster, as built. */
export interface FluxSimulationInput {
  readonly clusterDir: string;
  /** What the root sync applies; undefined when the cluster path does not build. */
  readonly rootObjects?: readonly Record<string, unknown>[];
  /** Every Kustomization of the cluster whose path built. */
  readonly kustomizations: readonly AppliedKustomization[];
  readonly prerequisites: PlatformPrerequisites;
  /** The Flux minor version the cluster runs (default: the current one). */
  readonly targetFlux?: string;
}

/** Runs every apply-order check over one cluster. */
export function simulateFlux(input: FluxSimulationInput): { findings: Finding[]; notes: string[] } {
  const { clusterDir, kustomizations, prerequisites } = input;
  const crds = checkCrdAvailability(input);
  const hosts = checkServiceHosts(kustomizations, prerequisites.charts);
  const routes = checkRouteBackends(kustomizations, prerequisites.charts);
  return {
    findings: [
      ...crds.findings,
      ...checkHealthCheckTargets(kustomizations),
      ...checkSealedSecretScopes({ clusterDir, kustomizations, ...(input.rootObjects ? { rootObjects: input.rootObjects } : {}) }),
      ...checkWorkloadReferences({
        kustomizations,
        ...(input.rootObjects ? { rootObjects: input.rootObjects } : {}),
        ...(prerequisites.provided ? { provided: prerequisites.provided } : {}),
        ...(prerequisites.suppliedPullSecrets ? { suppliedPullSecrets: prerequisites.suppliedPullSecrets } : {}),
      }),
      ...checkMonitorPorts(kustomizations, prerequisites.charts ?? []),
      ...hosts.findings,
      ...routes.findings,
      ...checkBootstrapPrerequisites(clusterDir, kustomizations, prerequisites),
      ...checkReleaseOptions(kustomizations, prerequisites),
      ...checkFluxMetricRules(kustomizations, input.targetFlux),
      ...checkAlertProviders(kustomizations, input.rootObjects ? { clusterDir, objects: input.rootObjects } : undefined),
      ...checkShardLabels({ clusterDir, kustomizations, ...(input.rootObjects ? { rootObjects: input.rootObjects } : {}) }),
      ...checkGatewayFluxIngress({ clusterDir, kustomizations, ...(input.rootObjects ? { rootObjects: input.rootObjects } : {}) }),
      ...checkExternalArtifactProducer({ clusterDir, kustomizations, ...(input.rootObjects ? { rootObjects: input.rootObjects } : {}) }),
    ],
    notes: [...crds.notes, ...hosts.notes, ...routes.notes],
  };
}
