/**
 * The dry-run port: what a scaffold would write, without storing a run or
 * pushing anything. Implemented by the generator owner (render against a
 * read-only clone of the repository); the service only talks to this interface.
 */
import type { ClusterSpec } from '../model/cluster-spec.js';
import type { RunSecrets } from './run-record.js';

/** How a file of the tree would change relative to the repository's current content. */
export type PreviewChange = 'added' | 'modified' | 'removed' | 'unchanged';

/** One file a scaffold would write (or remove). */
export interface PreviewFile {
  /** Repository-relative path, e.g. `clusters/eu-prod-1/flux/kustomization.yaml`. */
  readonly path: string;
  readonly change: PreviewChange;
  /** The new content; absent for removed files, and where the implementation chooses not to show it. */
  readonly content?: string;
  /** What the repository holds now, for modified and removed files (for a diff view). */
  readonly previousContent?: string;
}

/** The outcome of a dry run. */
export interface ScaffoldPreview {
  /** The path Flux would be pointed at, `clusters/<name>`. */
  readonly gitopsPath: string;
  readonly files: readonly PreviewFile[];
}

/** What a dry run needs: the same inputs as a run, resolved by the service. */
export interface PreviewInput {
  readonly cluster: ClusterSpec;
  /** Never carries credentials; they are in `secrets`. */
  readonly repositoryUrl: string;
  readonly branch: string;
  readonly reference: string;
  /** Used to read the repository and to seal; never written anywhere. */
  readonly secrets: RunSecrets;
  readonly signal?: AbortSignal;
}

/** Computes what a scaffold would write. */
export interface ScaffoldPreviewer {
  /**
   * @throws ValidationError when the inputs cannot be rendered (e.g. unknown reference)
   * @throws UnavailableError when the repository cannot be read
   */
  preview(input: PreviewInput): Promise<ScaffoldPreview>;
}
