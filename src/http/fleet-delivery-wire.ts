/**
 * `delivery` on the fleet's writes (`POST /api/v1/upgrades`,
 * `DELETE /api/v1/clusters/{name}`): the same request field as a run's,
 * checked by the same rule, and how it is shown.
 */
import { z } from 'zod';
import type { DeliverySettings } from '../run/delivery.js';
import { checkDelivery } from '../service/request-resolver.js';
import { deliverySchema } from './wire-schemas.js';
import { toRawDelivery } from './wire-views.js';

/** The request field, described for the fleet's changes. */
export const fleetDeliverySchema = deliverySchema.describe(
  "How each run's commit reaches the branch, as for a scaffold. push (default): the run pushes it. pull_request: it goes on its own branch (`scaffold/<cluster>/upgrade` or `scaffold/<cluster>/remove`) through a pull/merge request that must be merged (or is merged with auto_merge) before the run succeeds, and so before a rollout's next wave starts. The runs reach the forge with the service's SCAFFOLD_FORGE_TOKEN or GitHub App (SCAFFOLD_FORGE_GITHUB_APP_*), only for repositories on the forge of SCAFFOLD_FORGE_API_URL.",
);

export const deliveryViewSchema = z.object({
  mode: z.enum(['push', 'pull_request']),
  auto_merge: z.boolean(),
  forge: z.string().optional(),
  api_url: z.string().optional(),
});

/**
 * The checked settings of a fleet change (undefined: push).
 * @throws ValidationError as for a run
 */
export function fleetDeliveryOf(wire: z.infer<typeof deliverySchema> | undefined, repositoryUrl: string): DeliverySettings | undefined {
  return checkDelivery(wire === undefined ? undefined : toRawDelivery(wire), repositoryUrl);
}

export function deliveryView(settings: DeliverySettings | undefined): z.infer<typeof deliveryViewSchema> {
  return {
    mode: settings?.mode ?? 'push',
    auto_merge: settings?.autoMerge ?? false,
    ...(settings?.forge ? { forge: settings.forge } : {}),
    ...(settings?.apiUrl ? { api_url: settings.apiUrl } : {}),
  };
}
