/**
 * Ports the scaffold run needs from the outside world. Declared here, by their
 * consumer; implemented in `git/` and `kubernetes/`; swapped in tests.
 */
import type { RenderOptions, RenderResult } from '../gitops/render-cluster.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import type { RunPass } from '../model/run-action.js';

/** How to authenticate to a git remote. Never logged, never written to .git/config. */
export type GitCredentials =
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'token'; readonly token: string; readonly username?: string }
  | { readonly kind: 'ssh'; readonly privateKey: string; readonly knownHosts?: string };

/** The author and committer of scaffold commits. */
export interface GitIdentity {
  readonly name: string;
  readonly email: string;
}

/** What to clone and how. */
export interface CloneOptions {
  readonly url: string;
  readonly branch: string;
  /** An empty or missing directory to clone into. */
  readonly dir: string;
  /**
   * An empty or missing directory, outside `dir`, for the repository itself
   * (objects, refs, index: `git clone --separate-git-dir`), `dir` then holding
   * only the work tree and a `.git` file naming this one. A runner puts its
   * work tree on a memory volume this way, where the files a checkout, a
   * render and a rebase create cost a fraction of a disk's (ext4 under a
   * rollout's load: 0.2–0.6 CPU-s of system time a checkout), while the
   * history, which grows with the repository, stays on disk. Removed with the
   * workspace. @default `dir`/.git
   */
  readonly gitDir?: string;
  /**
   * Directories (repository-relative, no trailing slash) to materialize with a
   * cone-mode sparse checkout; with `--filter=blob:none` the clone fetches only
   * their blobs, so its cost does not grow with the number of clusters.
   */
  readonly sparsePaths: readonly string[];
  /**
   * Also materialize every top-level directory of the branch except these
   * (e.g. `['clusters']`): a platform's shared roots (base/, or a catalog's
   * platform/, dns/…) are needed whatever they are called, while the one
   * directory that grows with every cluster stays out.
   */
  readonly sparseTopLevelExcept?: readonly string[];
  /**
   * Instead of a checkout, only the blobs of the files at these paths, a `*`
   * segment standing for any one name (every cluster's provenance.yaml is
   * `clusters`, `*`, `provenance.yaml` joined by slashes): they come in one
   * fetch into the clone's objects and are staged in its index, for a reader
   * of git objects (git-object-reader.ts), and no file is written. A checkout of one small
   * file per cluster cost a second of file creation at 1,000 clusters under a
   * rollout's load. `sparsePaths` must then be empty.
   */
  readonly fetchFiles?: readonly string[];
  readonly credentials?: GitCredentials;
  readonly signal?: AbortSignal;
}

/** A commit to make from the working tree. */
export interface CommitOptions {
  /** Repository-relative paths to stage (additions, changes and deletions). */
  readonly paths: readonly string[];
  /** First line, blank line, body. */
  readonly message: string;
  /** Git trailers such as `Scaffold-Id` and `Scaffold-Pass`, appended in order. */
  readonly trailers: Readonly<Record<string, string>>;
  readonly author: GitIdentity;
}

/** How {@link GitWorkspace.push} retries. */
export interface PushOptions {
  readonly maxAttempts?: number;
  readonly signal?: AbortSignal;
  readonly afterRebase?: (changedPaths: readonly string[]) => Promise<void>;
}

/** Outcome of a push. */
export interface PushResult {
  /** The commit the remote branch now points at. */
  readonly sha: string;
  /** How many attempts were needed (1 when there was no race). */
  readonly attempts: number;
}

/** What a render did to a working copy. */
export interface WorkTreeChanges {
  readonly written: readonly string[];
  readonly removed: readonly string[];
  readonly unchanged: readonly string[];
}

/** The render options a working copy takes: what it cannot supply itself (randomness, the platform commit, unless overridden). */
export type WorkTreeRenderOptions = Omit<RenderOptions, 'random' | 'platformCommit'> & {
  /** Override the platform commit (otherwise read from git). */
  readonly platformCommit?: string;
};

/** A render into a working copy: the rendered tree and what changed on disk. */
export interface WorkTreeRender {
  readonly result: RenderResult;
  readonly changes: WorkTreeChanges;
}

/** A cloned working copy. */
export interface GitWorkspace {
  readonly dir: string;
  /** Reads the working tree as it is on disk (paths confined to it). */
  reader(): RepoReader;
  /** The commit HEAD points at. */
  head(): Promise<string>;
  /** The newest commit that touched any of `paths`, or undefined. */
  lastCommitTouching(paths: readonly string[]): Promise<string | undefined>;
  /**
   * Stages `paths` and commits them if anything changed.
   * @returns the new commit's SHA, or undefined when there was nothing to commit
   */
  commit(options: CommitOptions): Promise<string | undefined>;
  /**
   * Pushes the current branch. On a non-fast-forward rejection it fetches,
   * rebases and retries with backoff, at most `maxAttempts` times.
   * After each rebase it calls `afterRebase` with the paths the remote changed
   * since the previous attempt (`['.']` when unknown); a throw stops the push,
   * so a caller can re-check the rebased tree before it leaves.
   * @throws UnavailableError when the remote cannot be reached or attempts run out
   */
  push(options?: PushOptions): Promise<PushResult>;
  /**
   * Force-pushes HEAD to another branch of the remote (a pass's review branch);
   * pushes nothing when that branch already holds the same tree.
   */
  pushBranch(branch: string, options?: { readonly signal?: AbortSignal }): Promise<PushResult>;
  /** Fetches `branch` and moves the working copy onto it (after a request was merged there). @returns its commit */
  syncTo(branch: string, options?: { readonly signal?: AbortSignal }): Promise<string>;
  /**
   * Renders a cluster into the working copy (reading the platform from it,
   * writing the tree, removing only files an earlier render owned).
   */
  render(options: WorkTreeRenderOptions): Promise<WorkTreeRender>;
  /**
   * The commit a pass of `cluster` (a scaffold's, an upgrade's, a removal's) landed as: the newest on HEAD that
   * touched `clusters/<cluster>` with the trailers `Scaffold-Pass: <pass>` and
   * `Scaffold-Cluster: <cluster>`; undefined when there is none.
   */
  passCommit(cluster: string, pass: RunPass): Promise<string | undefined>;
  /** Removes the working copy from disk. */
  dispose(): Promise<void>;
}

/** Clones repositories. */
export interface GitRemote {
  /**
   * @throws UnavailableError when the remote cannot be reached
   * @throws ValidationError when the URL or branch is malformed
   */
  clone(options: CloneOptions): Promise<GitWorkspace>;
}

/** Where the new cluster's Sealed Secrets controller lives. */
export interface SealingControllerRef {
  /** @default 'kube-system' */
  readonly namespace: string;
  /** The controller's Deployment and Service name. @default 'sealed-secrets-controller' */
  readonly name: string;
}

/** The new cluster's sealing certificate, fetched from its controller. */
export interface SealingCertificateSource {
  /**
   * Waits until the controller Deployment reports the `Available` condition.
   * @throws TimeoutError naming the Deployment and the state it was last seen in
   */
  waitForController(controller: SealingControllerRef, options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<void>;
  /**
   * Fetches `/v1/cert.pem` through the API server's service proxy, resolving the
   * port the way kubeseal does (the Service's first port name).
   * @returns the PEM text
   */
  fetchCertificate(controller: SealingControllerRef, options: { readonly signal?: AbortSignal }): Promise<string>;
  /**
   * POSTs one SealedSecret (as Git holds it) to the controller's `/v1/rotate`
   * through the same service proxy: the controller decrypts it with whichever
   * key it holds and seals the SAME values with its newest key, the one
   * `/v1/cert.pem` serves. The caller sends and receives ciphertext only.
   * @returns the controller's answer, parsed (a SealedSecret without apiVersion or kind)
   * @throws ConflictError when no key the controller holds decrypts it
   * @throws UnavailableError when the API server or the controller cannot be reached (the message names the server)
   */
  reencrypt(controller: SealingControllerRef, sealedSecret: Readonly<Record<string, unknown>>, options: { readonly signal?: AbortSignal }): Promise<unknown>;
}
