/**
 * `clusters -o resourceset`: the fleet as Flux Operator ResourceSet inputs,
 * without the service. The same inputs `GET /api/v1/clusters?format=resourceset`
 * answers (one per generated cluster, `id` the cluster name), printed as the
 * `inputs:` of a ResourceSet's spec: paste it beside a `resourcesTemplate` to
 * fan out over the clusters of this work tree. A static list: it does not
 * follow the fleet, which the service's answer to a ResourceSetInputProvider does.
 */
import { stringify } from 'yaml';
import { resourceSetInputs, type ClusterView } from '../fleet/cluster-view.js';

/** `{inputs: [...]}` as YAML, with a header saying where it goes; ends with a newline. */
export function formatResourceSetInputs(views: readonly ClusterView[]): string {
  const inputs = resourceSetInputs(views);
  return [
    '# ResourceSet inputs (fluxcd.controlplane.io/v1 ResourceSet spec.inputs), one per generated cluster:',
    "# use them as << inputs.name >>, << inputs.domain >>, … in the ResourceSet's resourcesTemplate.",
    stringify(inputs, { lineWidth: 0 }),
  ].join('\n');
}
