/**
 * What identifies a cluster: the repository, the branch and the name. Two
 * branches (or two repositories) may each hold a cluster of one name under
 * different trees, so a run, a removal or an active-run check on one says
 * nothing about the other. The run store's one-active-run index is on the
 * same three columns (db/migrations/0008-cluster-key.ts).
 *
 * A repository is compared by the URL git is handed, as the one URL policy
 * reads it (model/repository-url.ts): `/srv/gitops.git` and
 * `file:///srv/gitops.git` are one repository. Runs store that form, and
 * every lookup normalises what it is given the same way.
 */
import { ValidationError } from '../errors.js';
import { parseRepositoryUrl } from '../model/repository-url.js';

/** One cluster: its name in one branch of one repository. */
export interface ClusterKey {
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly name: string;
}

/**
 * The form of `url` runs are stored and looked up by: the URL git is handed.
 * A value the policy cannot read (an operator's default repository it would
 * refuse) is kept as given, so it still equals itself.
 */
export function repositoryKeyOf(url: string): string {
  try {
    return parseRepositoryUrl(url).url;
  } catch (error) {
    if (error instanceof ValidationError) return url;
    throw error;
  }
}
