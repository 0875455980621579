/**
 * The pre-push gate on a working tree on disk: verify wired to its real edges
 * (kubectl kustomize, the shipped CRD schemas, client-node's core-kind models,
 * the working copy's git history). The tree is hostile input like any clone:
 * the work-tree guard runs first, files are read through the confined reader,
 * and kustomize builds a copy of them that holds no link.
 */
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { GitClusterHistory } from '../git/git-cluster-history.js';
import { assertConfinedWorkTree } from '../git/work-tree-guard.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
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
}

/** A verifier that keeps its parsed schemas across calls (a runner verifies twice). */
export type WorkTreeVerify = (dir: string, options?: WorkTreeVerifyOptions) => Promise<WorkTreeReport>;

/** One cluster or all; the Flux version whose semantics apply (default scaffold.yaml's targetFlux, else 2.9). */
export interface WorkTreeVerifyOptions {
  readonly cluster?: string;
  readonly targetFlux?: string;
  readonly signal?: AbortSignal;
}

/** Creates a verifier; schemas are loaded on first use and then kept. */
export function createWorkTreeVerifier(): WorkTreeVerify {
  const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
  const kustomize = new KubectlKustomize();
  return async (dir, options = {}) => {
    await assertConfinedWorkTree(dir);
    const reader = new FsRepoReader(dir);
    // One copy of the tree per verify, shared by every build in it.
    const builder = new MaterializedKustomize(reader, { kustomize });
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
    };
  };
}

/** Verifies the working tree at `dir` (one cluster, or every cluster). */
export async function verifyWorkTree(dir: string, options: WorkTreeVerifyOptions = {}): Promise<WorkTreeReport> {
  return createWorkTreeVerifier()(dir, options);
}
