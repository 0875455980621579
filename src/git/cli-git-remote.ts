/**
 * GitRemote over native git. A clone is partial (`--filter=blob:none`) and
 * sparse (cone mode), so a run downloads the commits and trees of the shared
 * repository but only the blobs of the directories it works on: its cost stays
 * flat however many clusters the repository holds. History is kept whole (no
 * `--depth`) because pushing after a concurrent push needs a rebase, and a
 * rebase needs the merge base.
 */
import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { NotFoundError, ValidationError } from '../errors.js';
import { type Logger, silentLogger } from '../logger.js';
import type {
  CloneOptions,
  CommitOptions,
  GitCredentials,
  GitIdentity,
  GitRemote,
  GitWorkspace,
  PushOptions,
  PushResult,
  WorkTreeRender,
  WorkTreeRenderOptions,
} from '../run/ports.js';
import type { RunPass } from '../model/run-action.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { FsRepoReader } from './fs-repo-reader.js';
import { passCommitOf } from './pass-commit.js';
import { renderWorkTree } from './render-work-tree.js';
import { repoPath, sparseDir } from './repo-paths.js';
import { DEFAULT_IDENTITY, assertIdentity, identityEnv } from './git-identity.js';
import { withGitAuth } from './git-auth.js';
import { parseRepositoryUrl, type RemoteUrl } from '../model/repository-url.js';
import { assertConfinedWorkTree } from './work-tree-guard.js';
import { isWithin } from './confined-path.js';
import { isValidBranchName } from './branch-name.js';
import { pushReviewBranch, syncToRemoteBranch } from './review-branch.js';
import { type PushingWorkspace, pushHead } from './branch-push.js';
import { type GitResult, isTransientNetworkFailure, runGit, subcommand, toGitError } from './git-process.js';
import { interruptibleSleep } from '../interruptible-sleep.js';
import { type Backoff, jitteredDelayMs } from './backoff.js';
import { type PassTrailers, QueueSightings } from './landing-queue.js';
import { AttemptFence, fenceRef } from './attempt-fence.js';
import { MAC_TRAILER, type QueueAuth, ownQueueAuth, passCommitMac } from './queue-auth.js';
import { KnownCommits, headFromFiles, readCommitFacts } from './known-commits.js';
import { parseStagedEntries, stagedTreeId } from './staged-tree.js';
import { platformCommitOf } from './render-work-tree.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

/** Dependencies of {@link CliGitRemote}. */
export interface CliGitRemoteDeps {
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * Committer of commits that a push retry rebases (their author is kept).
   * @default the author of this workspace's last commit, else `gitops-scaffolder <gitops-scaffolder@localhost>`
   */
  readonly identity?: GitIdentity;
  /** Upper bound for one network operation (clone, fetch, push). @default 300000 */
  readonly networkTimeoutMs?: number;
  /**
   * Delay before push attempt n+1: a uniformly random share of
   * `min(maxMs, baseMs * 2^(n-1))` ("full jitter"), so racing runs spread out.
   * The window has to outgrow the number of pushes racing for the branch,
   * since each round lets only one of them through: with a 10 s cap, 50 runs
   * on 2 cores lost 1,566 pushes for 85 that landed and 9 runs gave up; 60 s
   * halved the lost pushes and every run landed (bench concurrent-runs).
   * @default { baseMs: 200, maxMs: 60000 }
   */
  readonly backoff?: Backoff;
  /** See `RunGitOptions.processGroup`; the runner passes 'caller' so its executor's group kill reaches git. @default 'own' */
  readonly gitProcessGroup?: 'own' | 'caller';
  /**
   * The landing queue's key, shared by the service and its runners
   * (queue-auth.ts): pass commits get a `Scaffold-Mac` trailer, announcements
   * a MAC, and only announcements under the same key are carried.
   * @default a key of this process's own (a run of the CLI): it carries nobody else's
   */
  readonly queueAuth?: QueueAuth;
}

/**
 * Written into every work clone's config. A clone lives for one run, so git's
 * automatic maintenance after a fetch or a commit (a `git maintenance run
 * --auto` process each time, three a run) only costs CPU: nothing it packs or
 * prunes is ever read again.
 */
const SCRATCH_CONFIG = { 'maintenance.auto': 'false', 'gc.auto': '0' } as const;
const SCRATCH_CLONE_CONFIG = Object.entries(SCRATCH_CONFIG).flatMap(([key, value]) => ['--config', `${key}=${value}`]);

/** Looks at the remote that change nothing there, so asking again after a broken connection is safe. */
const RETRIED_READS: ReadonlySet<string> = new Set(['ls-remote', 'fetch']);
/** How many times such a look is made again after a transient failure (isTransientNetworkFailure): about 3 s of pauses at the default backoff. */
const READ_RETRIES = 3;

/**
 * git ignores `uploadpack.allowFilter` passed with `-c` to the client: the
 * local upload-pack is started with a scrubbed environment. Naming the
 * upload-pack command with the settings, stored as `remote.origin.uploadpack`,
 * makes `--filter` work against any local bare repository, whether or not it
 * was created with `uploadpack.allowFilter` (network servers decide for
 * themselves; without filter support git falls back to a full clone). The file
 * transport itself needs no `protocol.file.allow=always`: that setting only
 * restricts submodules, and git-process allows `file` in GIT_ALLOW_PROTOCOL.
 */
const FILE_UPLOAD_PACK = 'git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack';

async function pathExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

interface WorkspaceState {
  readonly dir: string;
  /** The repository's own directory: `dir`/.git, or a separate one (CloneOptions.gitDir), removed with `dir`. */
  readonly gitDir: string;
  readonly branch: string;
  readonly remote: RemoteUrl;
  readonly credentials: GitCredentials | undefined;
  readonly logger: Logger;
  readonly identity: GitIdentity | undefined;
  readonly networkTimeoutMs: number;
  readonly backoff: Backoff;
  readonly processGroup: 'own' | 'caller';
  readonly auth: QueueAuth;
  readonly sightings: QueueSightings;
}

interface GitCall {
  readonly okExitCodes?: readonly number[];
  readonly input?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  readonly network?: boolean;
}

/** A sparse, partial working copy; every command runs with the remote's credentials because any of them may fetch a missing blob. */
class CliGitWorkspace implements GitWorkspace {
  private lastAuthor: GitIdentity | undefined;
  /** The fence of the run this workspace pushes for, made with its first fenced push. */
  private fence: AttemptFence | undefined;
  /** What the credentials look like in output, for errors built outside runGit. */
  private secrets: readonly string[] = [];
  /** The commits this workspace made, read once (known-commits.ts). */
  private readonly known = new KnownCommits();
  /** HEAD's top-level names as the clone listed them, by the commit they were listed for. */
  private topsOf: { readonly commit: string; readonly names: readonly string[] } | undefined;
  /** The platform commit of a render, by `<head>\0<reference>`: the same for a commit that changed only other clusters. */
  private readonly platformCommits = new Map<string, string | undefined>();

  constructor(private readonly state: WorkspaceState) {}

  get dir(): string {
    return this.state.dir;
  }

  reader(): RepoReader {
    return new FsRepoReader(this.state.dir);
  }

  /**
   * Runs git in the working copy. A look at the remote (`ls-remote`, `fetch`)
   * whose connection broke is made again, up to {@link READ_RETRIES} times after
   * a short jittered pause: a run waiting in the landing queue looks a dozen
   * times, and one connection a busy server reset must not fail a run whose
   * commits are fine. A push is never sent again here: whether one that broke
   * landed is for the landing protocol to read from the remote.
   */
  async git(args: readonly string[], call: GitCall = {}): Promise<GitResult> {
    const okExitCodes = call.okExitCodes ?? [0];
    if (call.network !== true || !RETRIED_READS.has(subcommand(args)) || okExitCodes.includes(128)) return this.gitOnce(args, call);
    for (let attempt = 1; ; attempt++) {
      const result = await this.gitOnce(args, { ...call, okExitCodes: [...okExitCodes, 128] });
      if (okExitCodes.includes(result.exitCode)) return result;
      const failure = toGitError(args, result, this.secrets);
      if (attempt > READ_RETRIES || !isTransientNetworkFailure(result)) throw failure;
      const { backoff, logger } = this.state;
      const delayMs = jitteredDelayMs(backoff, attempt);
      logger.warn(
        { git: subcommand(args), attempt, delayMs, reason: failure.message },
        `git ${subcommand(args)} lost its connection to the remote; trying again`,
      );
      await interruptibleSleep(delayMs, call.signal);
      call.signal?.throwIfAborted();
    }
  }

  private async gitOnce(args: readonly string[], call: GitCall): Promise<GitResult> {
    const { state } = this;
    const started = Date.now();
    const result = await withGitAuth(state.remote, state.credentials, (auth) => {
      this.secrets = auth.secrets;
      return runGit(args, {
        cwd: state.dir,
        env: {
          ...auth.env,
          // If the working copy were gone, git must not find an enclosing repository instead.
          GIT_CEILING_DIRECTORIES: dirname(state.dir),
          // Paths are file names, not globs or pathspec magic.
          GIT_LITERAL_PATHSPECS: '1',
          ...call.env,
        },
        secrets: auth.secrets,
        processGroup: state.processGroup,
        ...(call.okExitCodes ? { okExitCodes: call.okExitCodes } : {}),
        ...(call.input !== undefined ? { input: call.input } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
        ...(call.network ? { timeoutMs: state.networkTimeoutMs } : {}),
      });
    });
    state.logger.debug({ git: args[0], exitCode: result.exitCode, ms: Date.now() - started }, 'git');
    return result;
  }

  async head(): Promise<string> {
    const fromFiles = await headFromFiles(this.state.dir, this.state.gitDir);
    if (fromFiles !== undefined) return fromFiles;
    const result = await this.git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { okExitCodes: [0, 1] });
    if (result.exitCode !== 0) throw new NotFoundError(`branch ${this.state.branch} has no commits yet`);
    return result.stdout.trim();
  }

  async render(options: WorkTreeRenderOptions): Promise<WorkTreeRender> {
    if (options.platformCommit !== undefined) return renderWorkTree(this.dir, options);
    const platformCommit = await this.platformCommit(options.reference ?? REFERENCE_ENVIRONMENT);
    return renderWorkTree(this.dir, { ...options, ...(platformCommit !== undefined ? { platformCommit } : {}) });
  }

  /** Records the top-level names the clone listed for its branch, which HEAD now is. */
  async knowTops(names: readonly string[]): Promise<void> {
    const head = await headFromFiles(this.state.dir, this.state.gitDir);
    if (head !== undefined) this.topsOf = { commit: head, names };
  }

  /**
   * What `platformCommitOf` answers for HEAD, asked once per run: a commit this
   * workspace made that changed only other clusters' directories has its
   * parent's answer (pass 2 renders on pass 1's commit).
   */
  private async platformCommit(reference: string): Promise<string | undefined> {
    const head = await headFromFiles(this.state.dir, this.state.gitDir);
    if (head === undefined) return platformCommitOf(this.dir, reference);
    const key = `${head}\0${reference}`;
    if (this.platformCommits.has(key)) return this.platformCommits.get(key);
    const facts = this.known.get(head);
    const parentKey = facts?.parents.length === 1 ? `${facts.parents[0]}\0${reference}` : undefined;
    const elsewhere = facts?.changed?.every((path) => path.startsWith('clusters/') && path.split('/')[1] !== reference) ?? false;
    const value =
      parentKey !== undefined && elsewhere && this.platformCommits.has(parentKey)
        ? this.platformCommits.get(parentKey)
        : await platformCommitOf(this.dir, reference, this.topsOf?.commit === head ? this.topsOf.names : undefined);
    this.platformCommits.set(key, value);
    return value;
  }

  passCommit(cluster: string, pass: RunPass): Promise<string | undefined> {
    return passCommitOf(this.dir, cluster, pass);
  }

  async lastCommitTouching(paths: readonly string[]): Promise<string | undefined> {
    if (paths.length === 0) return undefined;
    const checked = paths.map((path) => repoPath(path, 'paths'));
    const result = await this.git(['log', '-1', '--format=%H', '--', ...checked], { okExitCodes: [0, 128] });
    if (result.exitCode === 128) {
      // An orphan branch has no log; anything else is a real failure.
      if (/does not have any commits yet/.test(result.stderr)) return undefined;
      throw toGitError(['log'], result, this.secrets);
    }
    const sha = result.stdout.trim();
    return sha === '' ? undefined : sha;
  }

  async commit(options: CommitOptions): Promise<string | undefined> {
    assertIdentity(options.author, 'author');
    if (options.message.trim().length === 0) throw new ValidationError([{ field: 'message', message: 'is empty' }]);
    const trailerArgs: string[] = [];
    for (const [key, value] of Object.entries(options.trailers)) {
      if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(key))
        throw new ValidationError([{ field: `trailers.${key}`, message: 'is not a trailer key (letters, digits, "-")' }]);
      if (/[\r\n\0]/.test(value)) throw new ValidationError([{ field: `trailers.${key}`, message: 'contains a line break' }]);
      trailerArgs.push('--trailer', `${key}: ${value}`);
    }
    if (MAC_TRAILER in options.trailers) throw new ValidationError([{ field: `trailers.${MAC_TRAILER}`, message: 'is written by the workspace itself' }]);
    const paths = options.paths.map((path) => repoPath(path, 'paths'));

    // `git add -- P` fails when P is neither on disk nor in the index (a directory
    // that never existed); such a path has nothing to stage.
    const onDisk: string[] = [];
    const gone: string[] = [];
    for (const path of paths) ((await pathExists(join(this.state.dir, path))) ? onDisk : gone).push(path);
    const stage = [...onDisk];
    if (gone.length > 0) {
      const listed = (await this.git(['ls-files', '-z', '--cached', '--', ...gone])).stdout.split('\0').filter(Boolean);
      stage.push(...gone.filter((path) => listed.some((file) => file === path || file.startsWith(`${path}/`))));
    }
    if (stage.length > 0) await this.git(['add', '--all', '--', ...stage]);

    // What the commit will change, which also says whether there is anything to commit.
    const changed = (await this.git(['diff', '--cached', '--name-only', '-z', '--no-renames'])).stdout.split('\0').filter(Boolean);
    if (changed.length === 0) return undefined;
    trailerArgs.push(...(await this.macTrailer(options.trailers)));

    await this.git(['commit', '--quiet', '--no-verify', '--no-gpg-sign', '--cleanup=whitespace', '--file=-', ...trailerArgs], {
      input: options.message,
      env: identityEnv(options.author, options.author),
    });
    this.lastAuthor = options.author;
    // Its id, parents, tree and trailers in one read: the push asks for them next.
    const { sha, facts } = await readCommitFacts(this, 'HEAD');
    this.known.set(sha, { ...facts, changed });
    return sha;
  }

  /**
   * A pass commit's `Scaffold-Mac` (with the service's key only): over its run,
   * attempt, pass, cluster and the tree it stages at `clusters/<cluster>`, what
   * a carry or a rebase onto other clusters keeps, so the service recognizes
   * the run's commit on the branch by it (landed-commits.ts).
   */
  private async macTrailer(trailers: Readonly<Record<string, string>>): Promise<string[]> {
    const { auth } = this.state;
    const id = trailers['Scaffold-Id'];
    const pass = trailers['Scaffold-Pass'];
    const cluster = trailers['Scaffold-Cluster'];
    if (!auth.shared || id === undefined || pass === undefined || cluster === undefined) return [];
    const clusterTree = await this.stagedClusterTree(cluster);
    return ['--trailer', `${MAC_TRAILER}: ${passCommitMac(auth.key, { id, attempt: auth.attempt, pass, cluster, clusterTree })}`];
  }

  /**
   * The tree staged at clusters/<cluster>, none there (a removal) being ''.
   * Hashed here from the index's entries (staged-tree.ts): git 2.39's
   * `write-tree` expands a sparse index to every file of every cluster first
   * (22 ms a commit at 1,000 clusters). The cluster committed is checked out,
   * so its entries are files; should they not be (a sparse directory entry) or
   * a name not survive decoding, git writes the tree as before.
   */
  private async stagedClusterTree(cluster: string): Promise<string> {
    const prefix = `clusters/${cluster}`;
    const listed = await this.git(['ls-files', '--sparse', '--stage', '-z', '--', `${prefix}/`]);
    try {
      const entries = parseStagedEntries(listed.stdout);
      if (entries.length === 0) return '';
      if (!entries.some((entry) => entry.path.includes('\uFFFD'))) {
        return stagedTreeId(entries, prefix, entries[0]!.oid.length === 64 ? 'sha256' : 'sha1');
      }
    } catch {
      // A sparse directory entry, or an index git would refuse to write: git says.
    }
    const root = (await this.git(['write-tree'])).stdout.trim();
    const entry = await this.git(['ls-tree', '-z', root, '--', prefix]);
    return /^040000 tree ([0-9a-f]+)\t/.exec(entry.stdout)?.[1] ?? '';
  }

  /** The workspace as a push sees it: one for the workspace's life, so what a push learned (the fence's empty tree) holds for the next. */
  private pushing: PushingWorkspace | undefined;

  push(options: PushOptions = {}): Promise<PushResult> {
    const { state } = this;
    const workspace: PushingWorkspace = this.pushing ?? {
      dir: state.dir,
      branch: state.branch,
      logger: state.logger,
      backoff: state.backoff,
      committer: () => state.identity ?? this.lastAuthor ?? DEFAULT_IDENTITY,
      git: (args, call) => this.git(args, call),
      head: async () =>
        this.head().catch((error: unknown) => {
          if (error instanceof NotFoundError) throw new ValidationError(`nothing to push: branch ${state.branch} has no commits`);
          throw error;
        }),
      fail: (args, result) => this.fail(args, result),
      auth: state.auth,
      sightings: state.sightings,
      known: this.known,
      gitDir: state.gitDir,
      attemptFence: (trailers: PassTrailers) => {
        const owner = { cluster: trailers.cluster, attempt: state.auth.attempt, id: trailers.id };
        const ref = fenceRef(state.branch, owner);
        if (this.fence?.ref !== ref) this.fence = new AttemptFence(ref, owner);
        return this.fence;
      },
    };
    this.pushing = workspace;
    return pushHead(workspace, options);
  }

  pushBranch(branch: string, options: { readonly signal?: AbortSignal } = {}): Promise<PushResult> {
    return pushReviewBranch(this, branch, options.signal);
  }

  syncTo(branch: string, options: { readonly signal?: AbortSignal } = {}): Promise<string> {
    return syncToRemoteBranch(this, branch, options.signal);
  }

  fail(args: readonly string[], result: GitResult): Error {
    return toGitError(args, result, this.secrets);
  }

  async dispose(): Promise<void> {
    // The run is done with the branch: its fence goes (best effort; the service closes what a dead runner left open).
    await this.fence?.remove(this).catch(() => undefined);
    await rm(this.state.dir, { recursive: true, force: true });
    await rm(this.state.gitDir, { recursive: true, force: true });
  }
}

/**
 * GitRemote implemented by spawning native git (2.38 or newer).
 *
 * clone = `git clone --filter=blob:none --no-checkout --single-branch --no-tags --branch B`,
 * then `git sparse-checkout set --cone --sparse-index`, then `git checkout B`. When the branch
 * does not exist on the remote yet (an empty repository), the working copy
 * starts an orphan branch B with origin configured, and the first push creates it.
 */
export class CliGitRemote implements GitRemote {
  private readonly logger: Logger;
  private readonly auth: QueueAuth;
  private readonly sightings = new QueueSightings();

  constructor(private readonly deps: CliGitRemoteDeps = {}) {
    this.logger = deps.logger ?? silentLogger;
    if (deps.identity) assertIdentity(deps.identity, 'identity');
    this.auth = deps.queueAuth ?? ownQueueAuth();
  }

  /**
   * @throws ValidationError when the URL, branch, sparse paths or credentials are malformed, or `dir` is not empty
   * @throws AuthenticationError / ForbiddenError when the remote refuses the credentials
   * @throws NotFoundError when the repository does not exist
   * @throws UnavailableError when the remote cannot be reached
   */
  async clone(options: CloneOptions): Promise<GitWorkspace> {
    const remote = parseRepositoryUrl(options.url);
    const { branch, credentials, signal } = options;
    const sparsePaths = [...new Set(options.sparsePaths.map(sparseDir))];
    const fetchFiles = options.fetchFiles?.map(fileGlob);
    if (fetchFiles !== undefined && (sparsePaths.length > 0 || options.sparseTopLevelExcept !== undefined)) {
      throw new ValidationError([{ field: 'fetchFiles', message: 'takes the place of sparsePaths and sparseTopLevelExcept' }]);
    }
    const dir = resolve(options.dir);
    const parent = dirname(dir);
    const networkTimeoutMs = this.deps.networkTimeoutMs ?? 300_000;
    const logger = this.logger.child({ remote: remote.display, branch });
    const call = { ...(signal ? { signal } : {}) };

    // check-ref-format is git's own definition of a branch name; "-x" would also read as an option.
    if (!(await isValidBranchName(branch))) {
      throw new ValidationError([{ field: 'branch', message: `${JSON.stringify(branch)} is not a valid branch name` }]);
    }
    const separateGitDir = options.gitDir === undefined ? undefined : resolve(options.gitDir);
    if (separateGitDir !== undefined && (isWithin(separateGitDir, dir) || isWithin(dir, separateGitDir))) {
      throw new ValidationError([{ field: 'gitDir', message: 'must lie outside the work tree, and the work tree outside it' }]);
    }
    if ((await entriesOf(dir)).length > 0) throw new ValidationError([{ field: 'dir', message: 'is not empty' }]);
    if (separateGitDir !== undefined && (await entriesOf(separateGitDir)).length > 0) {
      throw new ValidationError([{ field: 'gitDir', message: 'is not empty' }]);
    }
    await mkdir(dir, { recursive: true });

    const state: WorkspaceState = {
      dir,
      gitDir: separateGitDir ?? join(dir, '.git'),
      branch,
      remote,
      credentials,
      logger,
      identity: this.deps.identity,
      networkTimeoutMs,
      backoff: this.deps.backoff ?? { baseMs: 200, maxMs: 60_000 },
      processGroup: this.deps.gitProcessGroup ?? 'own',
      auth: this.auth,
      sightings: this.sightings,
    };
    const workspace = new CliGitWorkspace(state);
    const started = Date.now();
    try {
      const fileConfig = remote.kind === 'file' ? ['--config', `remote.origin.uploadpack=${FILE_UPLOAD_PACK}`] : [];
      const args = [
        'clone',
        '--quiet',
        '--filter=blob:none',
        '--no-checkout',
        '--single-branch',
        '--no-tags',
        '--branch',
        branch,
        ...SCRATCH_CLONE_CONFIG,
        ...fileConfig,
        ...(separateGitDir !== undefined ? [`--separate-git-dir=${separateGitDir}`] : []),
        '--',
        remote.url,
        dir,
      ];
      const cloned = await withGitAuth(remote, credentials, async (auth) => {
        const result = await runGit(args, {
          cwd: parent,
          env: auth.env,
          secrets: auth.secrets,
          okExitCodes: [0, 128],
          timeoutMs: networkTimeoutMs,
          processGroup: state.processGroup,
          ...call,
        });
        if (result.exitCode !== 0 && !/Remote branch .* not found in upstream/.test(result.stderr)) throw toGitError(args, result, auth.secrets);
        return result;
      });
      let orphan = false;
      if (cloned.exitCode !== 0) {
        orphan = true;
        await this.startOrphan(workspace, dir, separateGitDir, remote, branch);
      }
      // With no directories cone mode keeps just the files at the top level.
      // --sparse-index keeps directories outside the cone as single tree entries in
      // the index, so checkout, add and commit cost the same with 10 or 1,000 other
      // clusters in the repository (a full index would list every one of their files).
      const cone = new Set(sparsePaths);
      let topsOfBranch: string[] | undefined;
      if (!orphan && options.sparseTopLevelExcept !== undefined) {
        const except = new Set(options.sparseTopLevelExcept);
        // Every top-level entry, as `ls-tree --name-only` names them: the trees widen the cone, and all of them are what the render's platform commit reads.
        const entries = (await workspace.git(['ls-tree', branch, '--'], call)).stdout.split('\n').filter((line) => line !== '');
        const names = entries.map((line) => line.slice(line.indexOf('\t') + 1));
        for (const [i, line] of entries.entries()) if (line.split(' ')[1] === 'tree' && !except.has(names[i]!)) cone.add(names[i]!);
        topsOfBranch = names;
      }
      if (fetchFiles !== undefined) {
        if (!orphan) await stageFilesOf(workspace, branch, fetchFiles, call);
      } else {
        await workspace.git(['sparse-checkout', 'set', '--cone', '--sparse-index', ...(cone.size > 0 ? ['--', ...[...cone].sort()] : [])], call);
        if (!orphan) await workspace.git(['checkout', '--quiet', branch, '--'], { ...call, network: true });
      }
      if (topsOfBranch !== undefined) await workspace.knowTops(topsOfBranch);
      await assertConfinedWorkTree(dir);
      logger.info({ sparsePaths, orphan, ms: Date.now() - started }, 'cloned');
      return workspace;
    } catch (error) {
      await workspace.dispose();
      throw error;
    }
  }

  /** The remote has no branch B (an empty repository): a fresh repository whose first push creates it. */
  private async startOrphan(workspace: CliGitWorkspace, dir: string, gitDir: string | undefined, remote: RemoteUrl, branch: string): Promise<void> {
    // A failed clone may leave an empty .git behind.
    for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true });
    if (gitDir !== undefined) await rm(gitDir, { recursive: true, force: true });
    const separate = gitDir !== undefined ? [`--separate-git-dir=${gitDir}`] : [];
    await runGit(['init', '--quiet', `--initial-branch=${branch}`, ...separate, '--', dir], { cwd: dirname(dir) });
    // -t B: fetch only this branch, as --single-branch would have.
    await workspace.git(['remote', 'add', '-t', branch, '--', 'origin', remote.url]);
    await workspace.git(['config', 'remote.origin.tagOpt', '--no-tags']);
    // What a clone is given with --config; `git init` takes no such option.
    for (const [key, value] of Object.entries(SCRATCH_CONFIG)) await workspace.git(['config', key, value]);
    if (remote.kind === 'file') await workspace.git(['config', 'remote.origin.uploadpack', FILE_UPLOAD_PACK]);
    this.logger.warn({ remote: remote.display, branch }, 'remote branch does not exist yet; starting it');
  }
}

/** The names in `dir`; none when it does not exist yet. */
async function entriesOf(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return [];
  }
}

/**
 * A `fetchFiles` path as its segments. Segments are repository path names or
 * `*` alone; nothing else of a glob's syntax (`!`, `**`, classes, escapes)
 * gets through.
 */
function fileGlob(path: string): readonly string[] {
  const segments = path.split('/');
  const ok = segments.every((segment) => segment === '*' || (segment !== '' && segment !== '.' && segment !== '..' && /^[A-Za-z0-9._-]+$/.test(segment)));
  if (!ok) throw new ValidationError([{ field: 'fetchFiles', message: `${JSON.stringify(path)} is not a path of names and * segments` }]);
  return segments;
}

/** Whether `path`'s segments are those of `glob`, a `*` standing for any one name. */
function globMatches(glob: readonly string[], path: readonly string[]): boolean {
  return glob.length === path.length && glob.every((segment, i) => segment === '*' || segment === path[i]);
}

/**
 * Fetches the blobs of `branch`'s files that `globs` match, in one request
 * (what a partial clone's checkout does for the files it writes), and stages
 * those files in the index without writing them: a reader of git objects
 * (git-object-reader.ts, which lists the index) sees exactly them, as it saw
 * the files a sparse checkout of the globs wrote. The trees are in the clone
 * already; `ls-tree` lists the files below each glob's literal start.
 */
async function stageFilesOf(workspace: CliGitWorkspace, branch: string, globs: readonly (readonly string[])[], call: GitCall): Promise<void> {
  const starts = new Set(
    globs.map((glob) => {
      const wild = glob.indexOf('*');
      return wild === -1 ? glob.join('/') : `${glob.slice(0, wild).join('/')}/`;
    }),
  );
  // A glob starting with `*` lists the whole tree ('/' is no path ls-tree takes).
  const pathspecs = starts.has('/') ? [] : [...starts];
  const listed = await workspace.git(['ls-tree', '-r', '-z', '--full-tree', branch, '--', ...pathspecs], call);
  const matched: string[] = [];
  const blobs = new Set<string>();
  for (const record of listed.stdout.split('\0')) {
    // Files, links (blobs of mode 120000) and submodules (commits): the reader refuses the last two by their path.
    const match = /^(\d{6}) (blob|commit) ([0-9a-f]+)\t(.+)$/s.exec(record);
    if (match === null || !globs.some((glob) => globMatches(glob, match[4]!.split('/')))) continue;
    matched.push(record);
    if (match[2] === 'blob') blobs.add(match[3]!);
  }
  if (blobs.size > 0) {
    // The arguments a partial clone's own lazy fetch passes: no negotiation (the objects are wanted by id), no refs written.
    await workspace.git(
      [
        '-c',
        'fetch.negotiationAlgorithm=noop',
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        '--recurse-submodules=no',
        '--filter=blob:none',
        '--stdin',
        'origin',
      ],
      { ...call, input: `${[...blobs].join('\n')}\n`, network: true },
    );
  }
  // ls-tree's records are what --index-info reads ("<mode> <type> <object>\t<path>").
  if (matched.length > 0) await workspace.git(['update-index', '--add', '-z', '--index-info'], { ...call, input: `${matched.join('\0')}\0` });
}
