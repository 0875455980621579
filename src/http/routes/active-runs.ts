/**
 * The check an upgrade and a removal make before they start: none of their
 * clusters may have an active run in that repository and branch, since it
 * would write the same directory. The store's one-active-run rule still
 * holds behind it; this answers first, naming the run.
 */
import { ConflictError } from '../../errors.js';
import type { ScaffoldService } from '../../service/scaffold-service.js';

/**
 * @param then - what the message tells the caller to do once the run has ended: `upgrade`, `remove`
 * @throws ConflictError naming the first active run of one of `clusters`
 */
export async function refuseActiveRuns(service: ScaffoldService, repository: { readonly repositoryUrl: string; readonly branch: string }, clusters: readonly string[], then: string): Promise<void> {
  const wanted = new Set(clusters);
  // One cluster: the store filters by it.
  const only = clusters.length === 1 ? { cluster: clusters[0]! } : {};
  for (const status of ['pending', 'running'] as const) {
    const active = (await service.list({ status, limit: 1000, ...only })).runs.find((r) => wanted.has(r.cluster.name) && r.repositoryUrl === repository.repositoryUrl && r.branch === repository.branch);
    if (active !== undefined) throw new ConflictError(`cluster ${active.cluster.name} has an active run (${active.id}, ${active.status}): ${then} it once that run has ended`);
  }
}
