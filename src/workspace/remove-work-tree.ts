/**
 * `remove` on a working tree on disk: delete the generator's files of one
 * cluster (those its provenance lists), keep everything else, say what the
 * cluster's Flux will delete, and optionally record the removal as commits.
 *
 * Data stays unless asked for: objects marked `kustomize.toolkit.fluxcd.io/prune:
 * disabled` (the stateful namespaces, StatefulSets and volumes) survive the
 * prune. `deleteData` lifts that mark first, in a commit of its own (a patch in
 * each affected layer's overlay that removes the annotation), so Flux applies
 * the unmarked objects before the removal commit prunes them.
 */
import { dirname } from 'node:path';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { runGit } from '../git/git-process.js';
import { writeTree } from '../git/write-tree.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { planRemoval, type RemovalPlan } from '../fleet/plan-removal.js';
import { forecastLayerPrune, formatObjectRef, PRUNE_ANNOTATION, PRUNE_DISABLED, type LayerPrune } from '../fleet/prune-forecast.js';
import { PROVENANCE_FILE } from '../gitops/provenance.js';
import { parseReferenceName } from '../model/cluster-spec.js';
import { fluxPathBuilder } from '../verify/flux-path-build.js';
import type { KustomizeBuilder } from '../verify/kustomize-builder.js';
import { parseDocument } from 'yaml';
import { documentToYaml } from '../gitops/yaml.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

/** Inputs of {@link removeWorkTree}. */
export interface RemoveWorkTreeOptions {
  readonly cluster: string;
  /** @default 'development' */
  readonly reference?: string;
  /** Commit the removal (only the removed paths are staged). @default false */
  readonly commit?: boolean;
  /**
   * Delete the data too: first lift the prune protection in a commit of its own.
   * Needs `commit`. @default false
   */
  readonly deleteData?: boolean;
  /** Author of that commit. @default gitops-scaffolder <gitops-scaffolder@localhost> */
  readonly author?: { readonly name: string; readonly email: string };
  /** Builds the layers to forecast the prune. @default kubectl kustomize */
  readonly builder?: KustomizeBuilder;
  /** Skip the forecast (the removal itself never needs it; `deleteData` does). @default false */
  readonly skipForecast?: boolean;
}

/** What was removed, kept, what Flux deletes, and what was committed. */
export interface RemoveOutcome extends RemovalPlan {
  /** Per layer Kustomization the sync prunes: what its finalizer deletes and what it keeps. Absent when not forecast. */
  readonly prune?: readonly LayerPrune[];
  /** Layers whose protection could not be forecast (the path does not build), with kustomize's reason. */
  readonly unbuilt?: readonly { readonly path: string; readonly error: string }[];
  /** With `deleteData`: the overlay kustomizations the lift commit patched. */
  readonly lifted?: readonly string[];
  /** With `deleteData` and `commit`: the commit lifting the protection, before the removal commit. */
  readonly liftCommit?: string;
  /** The commit recording the removal, when asked for and something was removed. */
  readonly commit?: string;
}

/** The JSON patch that removes the protection from every object carrying it. */
export const LIFT_PROTECTION_PATCH = {
  target: { annotationSelector: `${PRUNE_ANNOTATION}=${PRUNE_DISABLED}` },
  patch: `- op: remove\n  path: /metadata/annotations/${PRUNE_ANNOTATION.replace('/', '~1')}\n`,
};

/** Builds each layer the sync prunes and splits its objects into deleted and protected. */
async function forecast(dir: string, plan: RemovalPlan, builder: KustomizeBuilder): Promise<Pick<RemoveOutcome, 'prune' | 'unbuilt'>> {
  const build = fluxPathBuilder({ reader: new FsRepoReader(dir), builder, repoRoot: dir });
  const prune: LayerPrune[] = [];
  const unbuilt: { path: string; error: string }[] = [];
  for (const layer of plan.layers) {
    const built = await build(layer.path);
    if (built.ok) prune.push(forecastLayerPrune(layer, built.objects));
    else unbuilt.push({ path: layer.path, error: built.error });
  }
  return { prune, unbuilt };
}

/**
 * Removes `clusters/<cluster>/`'s generated files from the working tree at `dir`.
 * @throws see planRemoval; ValidationError for `deleteData` without `commit`, or when a protected layer's overlay is not the cluster's
 */
export async function removeWorkTree(dir: string, options: RemoveWorkTreeOptions): Promise<RemoveOutcome> {
  if (options.deleteData === true && options.commit !== true) {
    throw new ValidationError([
      {
        field: 'delete-data',
        message: 'needs --commit: the protection is lifted in a commit of its own, which Flux must apply before the removal commit prunes the data',
      },
    ]);
  }
  const author = options.author ?? { name: 'gitops-scaffolder', email: 'gitops-scaffolder@localhost' };
  const git = {
    cwd: dir,
    env: {
      GIT_CEILING_DIRECTORIES: dirname(dir),
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_COMMITTER_NAME: author.name,
      GIT_COMMITTER_EMAIL: author.email,
    },
  };
  let liftCommit: string | undefined;
  let lifted: string[] | undefined;
  let plan: RemovalPlan;
  let forecasted: Pick<RemoveOutcome, 'prune' | 'unbuilt'>;
  if (options.deleteData === true) {
    const lift = await planLiftProtection(dir, options);
    ({ plan } = lift);
    forecasted = { prune: lift.prune };
    lifted = [...lift.files.keys()];
    if (lift.files.size > 0) {
      await writeTree(dir, lift.files);
      await runGit(['add', '--', ...lifted], git);
      await runGit(['commit', '--quiet', '--no-verify', '-m', lift.message, '--', ...lifted], git);
      liftCommit = (await runGit(['rev-parse', 'HEAD'], git)).stdout.trim();
    }
  } else {
    plan = await planRemoval(new FsRepoReader(dir), options.cluster, options.reference ?? REFERENCE_ENVIRONMENT);
    // Without kubectl the removal still says which layers prune.
    forecasted = options.skipForecast === true ? {} : await forecast(dir, plan, options.builder ?? new KubectlKustomize()).catch(() => ({}));
  }
  await writeTree(dir, plan.write, { remove: plan.remove });
  const outcome: RemoveOutcome = { ...plan, ...forecasted, ...(lifted !== undefined ? { lifted } : {}), ...(liftCommit !== undefined ? { liftCommit } : {}) };
  if (options.commit !== true || plan.remove.length === 0) return outcome;
  const paths = [...plan.remove, ...plan.write.keys()];
  // Only the removal's paths: anything else the person has staged or changed stays out of this commit.
  await runGit(['rm', '--cached', '--quiet', '--ignore-unmatch', '--', ...plan.remove], git);
  await runGit(['add', '--', ...plan.write.keys()], git);
  await runGit(['commit', '--quiet', '--no-verify', '-m', removalMessage(outcome), '--', ...paths], git);
  const head = await runGit(['rev-parse', 'HEAD'], git);
  return { ...outcome, commit: head.stdout.trim() };
}

/** What deleting the data lands first: the overlay patches lifting the protection, and their commit message. */
export interface LiftPlan {
  readonly plan: RemovalPlan;
  /** Per layer the sync prunes, before the lift: what it deletes and what the mark protects. */
  readonly prune: readonly LayerPrune[];
  /** Repository-relative overlay kustomization → its content with the lift patch; empty when nothing is protected (or a lift already landed). */
  readonly files: ReadonlyMap<string, string>;
  readonly message: string;
}

/**
 * Plans the commit that lifts the prune protection of the cluster's objects in
 * the working tree at `dir`, writing nothing: the CLI's `remove --delete-data`
 * commits it locally, a removal run pushes it and waits for Flux to apply it.
 * Deleting data needs to know what is protected, so every layer must build.
 * @throws see planRemoval; ValidationError when a layer does not build or a protected layer's overlay is not the cluster's
 */
export async function planLiftProtection(dir: string, options: Pick<RemoveWorkTreeOptions, 'cluster' | 'reference' | 'builder'>): Promise<LiftPlan> {
  const plan = await planRemoval(new FsRepoReader(dir), options.cluster, options.reference ?? REFERENCE_ENVIRONMENT);
  const forecasted = await forecast(dir, plan, options.builder ?? new KubectlKustomize());
  const files = await liftProtection(dir, plan, forecasted);
  const prune = forecasted.prune ?? [];
  return { plan, prune, files, message: liftMessage(plan, prune) };
}

/** {@link planLiftProtection}, its patches written into the working tree at `dir` (not committed). */
export async function liftWorkTree(dir: string, options: Pick<RemoveWorkTreeOptions, 'cluster' | 'reference' | 'builder'>): Promise<LiftPlan> {
  const lift = await planLiftProtection(dir, options);
  if (lift.files.size > 0) await writeTree(dir, lift.files);
  return lift;
}

/**
 * The overlay kustomizations that get the lift patch: each layer with protected
 * objects, whose path must be a kustomization the cluster's removal deletes anyway.
 * @throws ValidationError when a protected layer's path is not a generated overlay of the cluster (its objects could not be unmarked for this cluster alone)
 */
async function liftProtection(dir: string, plan: RemovalPlan, forecasted: Pick<RemoveOutcome, 'prune' | 'unbuilt'>): Promise<Map<string, string>> {
  if ((forecasted.unbuilt ?? []).length > 0) {
    throw new ValidationError([
      {
        field: 'delete-data',
        message: `cannot tell what is protected in ${forecasted.unbuilt!.map((u) => u.path).join(', ')}: the path does not build (${forecasted.unbuilt![0]!.error})`,
      },
    ]);
  }
  const reader = new FsRepoReader(dir);
  const files = new Map<string, string>();
  for (const layer of forecasted.prune ?? []) {
    if (layer.protected.length === 0) continue;
    const file = `${layer.path}/kustomization.yaml`;
    const text = await reader.read(file);
    if (text === undefined || !plan.remove.includes(file)) {
      throw new ValidationError([
        {
          field: 'delete-data',
          message: `layer ${layer.name} applies ${layer.path}, which is not an overlay gitops-scaffolder wrote for ${plan.name}: lift its protection by hand`,
        },
      ]);
    }
    const doc = parseDocument(text);
    const patches = doc.get('patches');
    if (patches === undefined || patches === null) doc.set('patches', [LIFT_PROTECTION_PATCH]);
    else doc.addIn(['patches'], doc.createNode(LIFT_PROTECTION_PATCH));
    files.set(file, documentToYaml(doc));
  }
  return files;
}

/** The commit message lifting the protection: what becomes deletable and why it is its own commit. */
export function liftMessage(plan: Pick<RemovalPlan, 'name' | 'gitopsPath'>, prune: readonly LayerPrune[]): string {
  const objects = prune.flatMap((layer) => layer.protected.map(formatObjectRef));
  return [
    `Lift the prune protection of cluster ${plan.name} before deleting its data`,
    '',
    `Removes ${PRUNE_ANNOTATION}: ${PRUNE_DISABLED} from ${objects.length} object(s) of ${plan.gitopsPath}/ (${objects.join(', ')}).`,
    'Once Flux has applied this commit, the removal commit that follows deletes them and their volumes.',
  ].join('\n');
}

/** The commit message of a removal: what went, what stayed, and what Flux deletes. */
export function removalMessage(plan: RemovalPlan & Pick<RemoveOutcome, 'prune'>): string {
  const lines = [`Remove cluster ${plan.name}`, '', `Deletes the ${plan.remove.length} file(s) gitops-scaffolder generated under ${plan.gitopsPath}/.`];
  if (plan.kept.length > 0)
    lines.push(
      `Keeps ${plan.kept.length} file(s) it did not write${plan.fluxBootstrap ? ", flux bootstrap's flux-system/ among them" : plan.flux === 'flux-instance' ? ', the FluxInstance among them' : ''}.`,
    );
  lines.push('', ...fluxEffect(plan).map((line) => line.replace(/^ {2}/, '')));
  return lines.join('\n');
}

/** What the cluster's Flux does with the removal, one line each (indented lines are details). */
export function fluxEffect(plan: RemovalPlan & Pick<RemoveOutcome, 'prune'>): string[] {
  const lines = [
    plan.flux === 'flux-instance'
      ? `The FluxInstance stays (${plan.gitopsPath}/kustomization.yaml now lists only it): Flux stays installed, and its sync prunes the rest.`
      : plan.flux === 'bootstrap'
        ? `flux-system/ stays (${plan.gitopsPath}/kustomization.yaml now lists only what gitops-scaffolder did not write): Flux stays installed, and its sync prunes the rest.`
        : `${plan.gitopsPath}/kustomization.yaml stays and lists only what gitops-scaffolder did not write: whatever Flux syncs this path prunes the rest.`,
    `The sync deletes ${plan.syncDeletes.length} object(s): ${plan.syncDeletes.map(formatObjectRef).join(', ') || 'none'}.`,
  ];
  if (plan.prune === undefined) {
    lines.push(
      `Then each layer Kustomization that prunes (${
        plan.layers
          .filter((l) => l.prunes)
          .map((l) => l.name)
          .join(', ') || 'none'
      }) deletes what it applied, except objects marked ${PRUNE_ANNOTATION}: ${PRUNE_DISABLED}.`,
    );
    return lines;
  }
  for (const layer of plan.prune) {
    if (!layer.prunes) {
      lines.push(`Layer ${layer.name} does not prune: everything it applied stays on the cluster.`);
      continue;
    }
    lines.push(
      `Layer ${layer.name} deletes ${layer.deleted.length} object(s)${layer.protected.length > 0 ? ` and keeps ${layer.protected.length} marked ${PRUNE_ANNOTATION}: ${PRUNE_DISABLED}` : ''}.`,
    );
    if (layer.deleted.length > 0) lines.push(`  deleted: ${layer.deleted.map(formatObjectRef).join(', ')}`);
    if (layer.protected.length > 0) lines.push(`  kept (data): ${layer.protected.map(formatObjectRef).join(', ')}`);
  }
  return lines;
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
