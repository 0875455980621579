/**
 * KustomizeBuilder on `kubectl kustomize`: the kustomize that ships inside
 * kubectl (v5.7.1 with kubectl 1.35, the runner image's and the tests', closest
 * to what kustomize-controller v1.9 embeds) builds offline. Each call is one process; nothing is
 * cached here: kustomize/build-cache.ts keys outputs by their inputs and by
 * {@link KubectlKustomize.engine}.
 */
import { childLauncher } from '../process/spawn-helper.js';
import type { ChildStartError } from '../process/child-launcher.js';
import { stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { MissingDependencyError, TimeoutError, UnavailableError, ValidationError } from '../errors.js';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { KustomizeBuilder } from '../verify/kustomize-builder.js';

/** Options of {@link KubectlKustomize}. */
export interface KubectlKustomizeOptions {
  /**
   * The kubectl executable, a path or a name looked up on PATH.
   * @default 'kubectl'
   */
  readonly kubectl?: string;
  /**
   * How long one build may take before it is killed.
   * @default 60000
   */
  readonly timeoutMs?: number;
  /**
   * Largest output accepted, in bytes; a bigger build is treated as an error
   * rather than held in memory.
   * @default 67108864 (64 MiB)
   */
  readonly maxOutputBytes?: number;
}

/**
 * kubectl logs failures through klog as
 * `E1202 15:14:58.802550 6465 run.go:72] "command failed" err="…"`; the
 * quoted `err` is kustomize's own message. A message with line breaks (a
 * remote base whose `git fetch` failed) comes as `err=<`, its lines indented
 * by a tab, then ` >`.
 */
const KLOG_ERROR = /"command failed" err=("(?:[^"\\]|\\.)*")\s*$/m;
const KLOG_MULTILINE_ERROR = /"command failed" err=<\n([\s\S]*?)\n >\s*$/;

function kustomizeMessage(stderr: string, repoRoot: string): string {
  const match = KLOG_ERROR.exec(stderr);
  const multiline = KLOG_MULTILINE_ERROR.exec(stderr);
  let message = stderr.trim();
  if (match?.[1] !== undefined) {
    try {
      message = JSON.parse(match[1]) as string;
    } catch {
      message = match[1].slice(1, -1);
    }
  } else if (multiline?.[1] !== undefined) {
    message = multiline[1]
      .split('\n')
      .map((line) => line.replace(/^\t/, '').trim())
      .filter((line) => line !== '')
      .join(' ');
  }
  // One line: a verify finding is one line.
  message = message.replace(/\s*\n\s*/g, ' ');
  // Repository-relative paths keep findings identical wherever the tree is checked out.
  const root = repoRoot.replace(/\/+$/, '');
  return (message.split(`${root}/`).join('').split(root).join('.') || 'kustomize build failed').replace(/\s+$/, '');
}

/**
 * Go's collector, tuned for a process that lives a fraction of a second:
 * kustomize allocates heavily while it loads the schemas strategic-merge
 * patches need, and at Go's default (GOGC=100) collecting took a third of a
 * build's CPU. With GOGC=800 a combined build of a cluster's layers cost
 * 0.15-0.18 CPU-s instead of 0.22-0.26 (peak RSS 127 MB instead of 102 MB);
 * GOMEMLIMIT keeps the heap near 384 MiB at most whatever a tree makes it
 * hold, where the default would let it reach twice what is live.
 * GOMAXPROCS=1: a build is one goroutine's work, and with more processors Go
 * marks in parallel, which costs more CPU in all (a batched build of four
 * layers, 2 cores, 15 rounds: 0.150 CPU-s against 0.175, and 153 ms of wall
 * time against 165). A runner Job's 1-CPU limit gives kubectl that already
 * (Go's cgroup-aware default); the service's builds and local runs share the
 * host's cores with each other. A value the caller's environment sets wins.
 * Output depends on none of them.
 */
const GO_GC_ENV = { GOGC: '800', GOMEMLIMIT: '384MiB', GOMAXPROCS: '1' } as const;

/** The flags every build passes before its directory; part of the engine's identity. */
const BUILD_FLAGS = ['kustomize', '--load-restrictor', 'LoadRestrictionsRootOnly'] as const;

/**
 * The file `kubectl` names, as spawn finds it: itself when absolute, else the
 * first executable on PATH. Undefined when that depends on the build's working
 * directory (a relative path, a relative PATH entry searched first).
 */
async function resolveExecutable(kubectl: string): Promise<string | undefined> {
  if (kubectl.includes('/') && !isAbsolute(kubectl)) return undefined;
  const candidates = isAbsolute(kubectl)
    ? [kubectl]
    : (process.env['PATH'] ?? '').split(delimiter).map((dir) => (isAbsolute(dir) ? join(dir, kubectl) : undefined));
  for (const candidate of candidates) {
    if (candidate === undefined) return undefined;
    const found = await stat(candidate).catch(() => undefined);
    if (found?.isFile() === true && (found.mode & 0o111) !== 0) return `${candidate}\0${found.dev}:${found.ino}\0${found.size}\0${found.mtimeMs}`;
  }
  return undefined;
}

/** Builds kustomizations by spawning `kubectl kustomize <dir>` in the repository root (no shell). */
export class KubectlKustomize implements KustomizeBuilder {
  readonly #kubectl: string;
  readonly #timeoutMs: number;
  readonly #maxOutputBytes: number;

  constructor(options: KubectlKustomizeOptions = {}) {
    this.#kubectl = options.kubectl ?? 'kubectl';
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#maxOutputBytes = options.maxOutputBytes ?? 64 * 1024 * 1024;
  }

  /**
   * The binary (its path, inode, size and modification time: a replaced or
   * upgraded kubectl is another engine) and the flags. Told without running
   * kubectl: `kubectl version` would cost the process a cache saves.
   */
  async engine(): Promise<string | undefined> {
    const binary = await resolveExecutable(this.#kubectl);
    return binary === undefined ? undefined : `${binary}\0${BUILD_FLAGS.join(' ')}\0${this.#maxOutputBytes}`;
  }

  /**
   * @throws ValidationError with kustomize's error text when the build fails
   * @throws UnavailableError when kubectl cannot be run
   * @throws TimeoutError when the build exceeds `timeoutMs`
   */
  async build(repoRoot: string, dir: string, signal?: AbortSignal): Promise<string> {
    assertRepoPath(dir, 'dir');
    signal?.throwIfAborted();
    // `./` keeps kustomize from reading a path such as `github.com/x/y` as a remote URL.
    const target = dir === '.' ? '.' : `./${dir.replace(/\/+$/, '')}`;
    // Root-only (kustomize's default, said out loud): a kustomization loads files only from below its own directory.
    const child = childLauncher().start({
      command: this.#kubectl,
      args: [...BUILD_FLAGS, target],
      cwd: repoRoot,
      env: { ...GO_GC_ENV, ...process.env },
      ownGroup: false,
      maxStdoutBytes: this.#maxOutputBytes,
      maxStderrBytes: 1024 * 1024,
    });
    let failure: Error | undefined;
    const stop = (error: Error): void => {
      failure ??= error;
      child.kill();
    };
    const timer = setTimeout(() => stop(new TimeoutError(`kubectl kustomize ${target} did not finish within ${this.#timeoutMs} ms`)), this.#timeoutMs);
    const onAbort = (): void => stop(signal?.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError'));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { stdout, stderr, code, overflow } = await child.outcome.catch((error: ChildStartError) => {
        if (error.code === 'ENOENT')
          throw new MissingDependencyError(`kubectl not found (${this.#kubectl}): verify needs kubectl with kustomize on PATH to build kustomizations`, {
            cause: error,
          });
        throw new UnavailableError(`could not run ${this.#kubectl}: ${error.message}`, { cause: error });
      });
      if (signal?.aborted) throw signal.reason;
      if (failure) throw failure;
      if (overflow) throw new ValidationError(`kustomize output of ${dir} exceeds ${this.#maxOutputBytes} bytes`);
      if (code === 0) return stdout;
      throw new ValidationError(kustomizeMessage(stderr, repoRoot));
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
