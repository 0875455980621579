/**
 * `remove` on a working tree on disk: delete the generator's files of one
 * cluster (those its provenance lists), keep everything else, and optionally
 * record the removal as one commit.
 */
import { dirname } from 'node:path';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { runGit } from '../git/git-process.js';
import { writeTree } from '../git/write-tree.js';
import { planRemoval, type RemovalPlan } from '../fleet/plan-removal.js';
import { PROVENANCE_FILE } from '../gitops/provenance.js';
import { parseReferenceName } from '../model/cluster-spec.js';

/** Inputs of {@link removeWorkTree}. */
export interface RemoveWorkTreeOptions {
  readonly cluster: string;
  /** @default 'development' */
  readonly reference?: string;
  /** Commit the removal (only the removed paths are staged). @default false */
  readonly commit?: boolean;
  /** Author of that commit. @default gitops-scaffolder <gitops-scaffolder@localhost> */
  readonly author?: { readonly name: string; readonly email: string };
}

/** What was removed, kept and committed. */
export interface RemoveOutcome extends RemovalPlan {
  /** The commit recording the removal, when asked for and something was removed. */
  readonly commit?: string;
}

/**
 * Removes `clusters/<cluster>/`'s generated files from the working tree at `dir`.
 * @throws see planRemoval
 */
export async function removeWorkTree(dir: string, options: RemoveWorkTreeOptions): Promise<RemoveOutcome> {
  const plan = await planRemoval(new FsRepoReader(dir), options.cluster, options.reference ?? 'development');
  await writeTree(dir, new Map(), { remove: plan.remove });
  if (options.commit !== true || plan.remove.length === 0) return plan;
  const author = options.author ?? { name: 'gitops-scaffolder', email: 'gitops-scaffolder@localhost' };
  const git = { cwd: dir, env: { GIT_CEILING_DIRECTORIES: dirname(dir), GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_COMMITTER_NAME: author.name, GIT_COMMITTER_EMAIL: author.email } };
  // Only the removed paths: anything else the person has staged or changed stays out of this commit.
  await runGit(['rm', '--cached', '--quiet', '--ignore-unmatch', '--', ...plan.remove], git);
  await runGit(['commit', '--quiet', '--no-verify', '-m', removalMessage(plan), '--', ...plan.remove], git);
  const head = await runGit(['rev-parse', 'HEAD'], git);
  return { ...plan, commit: head.stdout.trim() };
}

/** The commit message of a removal: what went and what stayed. */
export function removalMessage(plan: RemovalPlan): string {
  const lines = [`Remove cluster ${plan.name}`, '', `Deletes the ${plan.remove.length} file(s) gitops-scaffolder generated under ${plan.gitopsPath}/.`];
  if (plan.kept.length > 0) lines.push(`Keeps ${plan.kept.length} file(s) it did not write${plan.fluxBootstrap ? ', flux bootstrap\'s flux-system/ among them' : ''}.`);
  return lines.join('\n');
}

/** What is under a cluster's directory in the working tree at `dir`, and whether the generator's provenance is among it. */
export interface ClusterLeftovers {
  /** Repository-relative files, sorted. */
  readonly files: readonly string[];
  /** False once a removal landed (only files the generator did not write are left), or for a directory it never wrote. */
  readonly generated: boolean;
}

/** Reads {@link ClusterLeftovers} of `clusters/<cluster>/`: what a rerun of a removal finds. */
export async function clusterLeftovers(dir: string, cluster: string): Promise<ClusterLeftovers> {
  const reader = new FsRepoReader(dir);
  const gitopsPath = `clusters/${parseReferenceName(cluster, 'cluster')}`;
  return { files: await reader.list(gitopsPath), generated: (await reader.read(`${gitopsPath}/${PROVENANCE_FILE}`)) !== undefined };
}
