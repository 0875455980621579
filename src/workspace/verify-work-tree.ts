/**
 * The pre-push gate on a working tree on disk: verify wired to its real edges
 * (kubectl kustomize, the shipped CRD schemas, client-node's core-kind models,
 * the working copy's git history). The tree is hostile input like any clone:
 * the work-tree guard runs first, files are read through the confined reader,
 * and kustomize builds a copy of them that holds no link.
 */
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { withoutDirs } from '../gitops/repo-reader.js';
import { GitClusterHistory } from '../git/git-cluster-history.js';
import { assertConfinedWorkTree } from '../git/work-tree-guard.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { shippedCrdKinds } from '../kustomize/crd-schema-dir.js';
import { type BuildCacheStats, KustomizeBuildCache } from '../kustomize/build-cache.js';
import { BatchedKustomize } from '../kustomize/batched-kustomize.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { MaterializedKustomize } from '../kustomize/materialized-kustomize.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { formatFinding, verifyRepository } from '../verify/verify-repository.js';

/** The report with findings already formatted one a line. */
export interface WorkTreeReport {
  readonly findings: readonly string[];
  readonly notes: readonly string[];
  readonly kustomizationsChecked: number;
  readonly summary: string;
  /** This verify's kustomize builds: how many ran kubectl and how many the verifier's cache answered. */
  readonly kustomizeBuilds?: { readonly run: number; readonly cached: number };
}

/** A verifier that keeps its parsed schemas across calls (a runner verifies twice). */
export type WorkTreeVerify = (dir: string, options?: WorkTreeVerifyOptions) => Promise<WorkTreeReport>;

/** One cluster or all; the Flux version whose semantics apply (default scaffold.yaml's targetFlux, else 2.9). */
export interface WorkTreeVerifyOptions {
  readonly cluster?: string;
  readonly targetFlux?: string;
  readonly signal?: AbortSignal;
  /**
   * Repository directories verify neither reads nor copies for kustomize: a
   * batch run's other clusters, which a run of this cluster alone would not
   * have cloned, so its verdict is that run's, and each verify copies one
   * cluster's files, not the batch's.
   */
  readonly leaveOut?: readonly string[];
}

/** Options of {@link createWorkTreeVerifier}. */
export interface WorkTreeVerifierOptions {
  /**
   * Keep kustomize outputs by the content of their inputs across this
   * verifier's verifies (kustomize/build-cache.ts); off, every build runs kubectl.
   * @default true
   */
  readonly buildCache?: boolean;
  /**
   * Run the builds verify asks for together (a wave of Kustomization paths) in
   * one kubectl process (kustomize/batched-kustomize.ts); off, one process a
   * build. Outputs are the same either way.
   * @default true
   */
  readonly batchBuilds?: boolean;
  /**
   * Where the copy of the tree kustomize builds (and a batch's wrappers) is
   * made. Every verify creates and removes a file per file of the tree; on a
   * disk filesystem those creations were the largest system-time cost of a
   * run (ext4: 0.08-0.25 CPU-s a verified run, from run to run, against
   * almost none on tmpfs), so a runner Job points this at a memory-backed volume.
   * @default os.tmpdir()
   */
  readonly scratchRoot?: string;
}

/** Creates a verifier; schemas are loaded on first use and then kept, and so are kustomize outputs. */
export function createWorkTreeVerifier(options: WorkTreeVerifierOptions = {}): WorkTreeVerify {
  const validator = new SchemaValidator({ schemas: shippedCrdKinds, coreKinds: new CoreKindValidator() });
  const kubectl = new KubectlKustomize();
  // Innermost, below the cache: only builds the cache could not answer reach a process.
  const scratch = options.scratchRoot !== undefined ? { scratchRoot: options.scratchRoot } : {};
  const kustomize = options.batchBuilds === false ? kubectl : new BatchedKustomize(kubectl, scratch);
  // A run verifies pass 1 and pass 2; most of pass 2's builds read exactly what pass 1's read.
  const cache = options.buildCache === false ? undefined : new KustomizeBuildCache();
  return async (dir, options = {}) => {
    // What is left out is neither read nor copied: the guard need not walk it either.
    await assertConfinedWorkTree(dir, { skip: options.leaveOut ?? [] });
    const reader = withoutDirs(new FsRepoReader(dir), options.leaveOut ?? []);
    // One copy of the tree per verify, shared by every build in it.
    const builder = new MaterializedKustomize(reader, { kustomize, ...scratch, ...(cache ? { cache } : {}) });
    const before = cache?.stats();
    let report;
    try {
      // History compares the tree with the previous commit (a lost flux-system/); none when `dir` is no repository.
      report = await verifyRepository({ reader, builder, validator, repoRoot: dir, history: new GitClusterHistory(dir) }, options);
    } finally {
      await builder.dispose();
    }
    return {
      findings: report.findings.map(formatFinding),
      notes: report.notes,
      kustomizationsChecked: report.kustomizationsChecked,
      summary: report.summary,
      kustomizeBuilds: buildsSince(cache, before, builder.builds),
    };
  };
}

function buildsSince(
  cache: KustomizeBuildCache | undefined,
  before: BuildCacheStats | undefined,
  uncached: number,
): NonNullable<WorkTreeReport['kustomizeBuilds']> {
  if (cache === undefined || before === undefined) return { run: uncached, cached: 0 };
  const now = cache.stats();
  return { run: now.misses - before.misses + now.uncacheable - before.uncacheable, cached: now.hits - before.hits };
}

/** Verifies the working tree at `dir` (one cluster, or every cluster). */
export async function verifyWorkTree(dir: string, options: WorkTreeVerifyOptions = {}): Promise<WorkTreeReport> {
  return createWorkTreeVerifier()(dir, options);
}
