/**
 * How an upgrade or a removal started from a cluster's page reaches the
 * branch: pushed (the default: no `delivery` is sent), or through its own
 * pull/merge request on `scaffold/<cluster>/<action>`, which the service opens
 * with its own forge credentials. The requests the two actions send and the
 * sentences that confirm them. Pure and free of the browser, so it is tested
 * under Node against the service's request schemas.
 */
import { reviewBranchOf } from '../../src/delivery/request-text.js';
import { passOfAction, runActionOf, type FleetAction } from '../../src/model/run-action.js';
import type { DeliveryBody, DeliveryValues, DeliveryWording } from './delivery-values.js';

export type { FleetAction };

export const CLUSTERS_API = '/api/v1/clusters';
export const UPGRADES_API = '/api/v1/upgrades';

/** The branch the action's request comes from (the runner's, docs/api.md "Fleet delivery"). */
export function requestBranch(action: FleetAction, cluster: string): string {
  return reviewBranchOf(cluster, passOfAction(action));
}

/** How the change reaches the branch, as a confirmation says it. */
export function deliveryPhrase(action: FleetAction, cluster: string, values: DeliveryValues): string {
  if (values.mode === 'push') return 'pushed straight to the branch';
  return `through a pull request on ${requestBranch(action, cluster)} that must be merged${values.autoMerge ? ' (merged once its checks pass)' : ''}`;
}

/** What the confirm step says the action will do, and how its commit reaches the branch. */
export function fleetConfirmation(action: FleetAction, cluster: string, values: DeliveryValues): string {
  const phrase = deliveryPhrase(action, cluster, values);
  const { noun, confirm } = runActionOf(action).dashboard;
  return confirm?.(cluster, phrase) ?? `The ${noun} lands as one commit touching only clusters/${cluster}/, ${phrase}.`;
}

/** The delivery section's words for the action's one commit. */
export function deliveryWording(action: FleetAction, cluster: string): DeliveryWording {
  return {
    question: `How the ${runActionOf(action).dashboard.noun}'s commit reaches the branch`,
    push: 'Push the commit to the branch',
    pullRequest: `Open a pull/merge request on ${requestBranch(action, cluster)} (a protected branch)`,
    forgeHint: 'Who hosts the repository; the service opens the request with its own forge credentials.',
    autoMerge: 'Merge the request once its checks pass (otherwise the run waits for a person to merge it)',
  };
}

/** `POST /api/v1/upgrades` starting the cluster's upgrade; `delivery` only for a pull request. */
export function upgradeRequestBody(
  name: string,
  delivery?: DeliveryBody,
): { readonly clusters: readonly string[]; readonly dry_run: false; readonly delivery?: DeliveryBody } {
  return { clusters: [name], dry_run: false, ...(delivery === undefined ? {} : { delivery }) };
}

/** A DELETE's request: `confirm` in the query; `delivery` (only for a pull request) or the data removal in a JSON body. */
export interface RemovalRequest {
  readonly path: string;
  readonly init: { readonly method: 'DELETE'; readonly headers?: Readonly<Record<string, string>>; readonly body?: string };
}

/**
 * @param dataRemoval - delete the data too: the cluster's kubeconfig, which the run needs to see its Flux apply the
 *   lift of the prune protection before it pushes the removal (always pushed, so no `delivery` goes with it)
 */
export function removalRequest(name: string, confirm: string, delivery?: DeliveryBody, dataRemoval?: { readonly kubeconfig: string }): RemovalRequest {
  const path = `${CLUSTERS_API}/${encodeURIComponent(name)}?${new URLSearchParams({ confirm }).toString()}`;
  const body =
    dataRemoval !== undefined ? { delete_data: true, kubeconfig: { inline: dataRemoval.kubeconfig } } : delivery !== undefined ? { delivery } : undefined;
  if (body === undefined) return { path, init: { method: 'DELETE' } };
  return { path, init: { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } };
}
