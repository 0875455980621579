/**
 * The embedded-mode executor: each run is a scaffold-runner child process on
 * this host. Secrets reach the child through its environment only (never argv,
 * never a file); the child does not inherit the service's own environment, so
 * API_TOKENS or DATABASE_URL never reach it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { hostname } from 'node:os';
import { UnavailableError, ValidationError } from '../errors.js';
import type { LandedCommitsReader } from '../git/landed-commits.js';
import { silentLogger, type Logger } from '../logger.js';
import { processAlive, readLease } from '../run-contract/run-lease.js';
import { lastEventOf } from '../run-contract/run-result.js';
import { RUNNER_ENV, queueKeyEnvOf, runEnvOf, runOptionsEnvOf, secretEnvOf } from '../run-contract/runner-inputs.js';
import { generateQueueKey, parseQueueKey } from '../git/queue-auth.js';
import { LocalRunDirs, signalGroup } from './local-run-dir.js';
import { MemoryRunQueue } from './memory-run-queue.js';
import type { ClaimedRun, RunQueue } from '../service/run-queue.js';
import { tailLines } from './output-file.js';
import type { ExecutionState, RunExecutor } from '../service/run-executor.js';
import type { RunCommit, RunSecrets, RunRecord } from '../run/run-record.js';

/** How to start scaffold-runner: e.g. `process.execPath` with `dist/bundle/scaffold-runner.js`, or with `--import tsx src/runner-cli.ts`. */
export interface RunnerCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** What the local executor needs. */
export interface LocalExecutorDeps {
  readonly runnerCommand: RunnerCommand;
  /** Runs keep their result file at `<dataDir>/runs/<id>/result.json`. */
  readonly dataDir: string;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Runs executing at once in this executor; more wait in the queue, reported as `pending`. @default 4 */
  readonly concurrency?: number;
  /**
   * Where runs beyond the concurrency limit wait, with their secrets. The
   * service passes the store's (`db/pg-run-queue.ts`): runs still waiting when
   * it stops or crashes are started by the next executor on that store
   * ({@link LocalExecutor.resume}), each exactly once.
   * @default a queue in memory, lost with the process
   */
  readonly queue?: RunQueue;
  /** Between SIGTERM and SIGKILL when cancelling. @default 10000 */
  readonly killGraceMs?: number;
  /** How long a finished run's output stays in memory (the monitor has stored it long before). @default 900000 */
  readonly retainFinishedMs?: number;
  /**
   * Variables of the service's environment passed on to the runner; nothing else is inherited.
   * @default PATH, HOME, TMPDIR, TMP, TEMP, LANG, LC_ALL, TZ, SystemRoot, GIT_EXEC_PATH, SSL_CERT_FILE, SSL_CERT_DIR, SCAFFOLD_SCRATCH_DIR
   */
  readonly inheritEnv?: readonly string[];
  /** Extra variables for every run (e.g. sealed-secrets controller defaults). */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /**
   * How long a runner's lease may go unrenewed, on this process's monotonic
   * clock, before the runner counts as gone (it renews every 2 s). Until then
   * a run this process did not start (before a restart) is reported running,
   * never lost. @default 15000
   */
  readonly leaseTtlMs?: number;
  /** The monotonic clock (ms) leases are judged on; never the wall clock. @default performance.now */
  readonly monotonicNow?: () => number;
  /**
   * Reads the commits a run landed on its branch, for a runner that died
   * without writing its result. Without it, such a run keeps the commits its
   * log reported.
   */
  readonly landedCommits?: LandedCommitsReader;
  /**
   * The landing queue's key, handed to every runner in its environment
   * (`SCAFFOLD_QUEUE_KEY`) and used to recognize a run's commits
   * (embedded mode: the file `queue-key` in the data directory, `embedded/queue-key.ts`).
   * @default a key made for this executor, so runs started before a restart are not recognized
   */
  readonly queueKey?: string;
}

// SCAFFOLD_SCRATCH_DIR: where verify copies trees for kustomize; an operator points it at a
// memory-backed directory, as a runner Job mounts one (files created on disk were the larger cost).
const DEFAULT_INHERITED = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LC_ALL',
  'TZ',
  'SystemRoot',
  'GIT_EXEC_PATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  RUNNER_ENV.scratchDir,
];

/** Cap on lines kept per run; a runner printing more is misbehaving, and the store keeps what the monitor copied. */
const MAX_LINES = 100_000;

interface Execution {
  readonly run: RunRecord;
  /** Held only until the process is spawned, then dropped. */
  secrets: RunSecrets | undefined;
  /**
   * `starting`: taken off the queue, its run directory being prepared;
   * `closing`: the process has exited and its leftovers are being cleaned up.
   */
  phase: 'starting' | 'running' | 'closing' | 'exited';
  /** Counts against the concurrency limit until it has exited. */
  holdsSlot: boolean;
  /** Kept until the process has exited, to read what a killed runner landed; then dropped. */
  credentials: RunSecrets['repositoryCredentials'];
  /** What the remote holds of the run, read when it ended without a result. */
  landed?: readonly RunCommit[];
  child?: ChildProcess;
  readonly lines: string[];
  /** Set when the process is gone: the output file's reader then reads to its end and stops. */
  processGone: boolean;
  /** The reader of the output file into `lines`; settled once every line is in. */
  reading?: Promise<void>;
  exit?: { code: number | null; signal: NodeJS.Signals | null; error?: string; cancelled?: boolean };
  /** Woken whenever a line arrives or the phase changes. */
  waiters: (() => void)[];
  exited: Promise<void>;
  markExited: () => void;
}

/** Runs scaffold-runner as child processes (embedded mode). */
export class LocalExecutor implements RunExecutor {
  readonly #runnerCommand: RunnerCommand;
  readonly #dirs: LocalRunDirs;
  readonly #logger: Logger;
  readonly #concurrency: number;
  readonly #killGraceMs: number;
  readonly #retainFinishedMs: number;
  readonly #inheritEnv: readonly string[];
  readonly #extraEnv: Readonly<Record<string, string>>;
  readonly #leaseTtlMs: number;
  readonly #landedCommits: LandedCommitsReader | undefined;
  readonly #queueKey: string;
  readonly #queue: RunQueue;
  /** Names this executor on the runs it claims (diagnostics only). */
  readonly #owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  /** Runs this executor took off the queue, until `retainFinishedMs` after they ended. */
  readonly #executions = new Map<string, Execution>();
  /** Slots taken: runs claimed and not yet exited, and a claim in flight. */
  #slots = 0;
  /** A claim is in flight: a run may have left the queue without being in `#executions` yet. */
  #claiming = false;
  /** The drain pass in progress, and whether another was asked for meanwhile. */
  #draining: Promise<void> | undefined;
  #drainAgain = false;
  #closed = false;

  constructor(deps: LocalExecutorDeps) {
    this.#runnerCommand = deps.runnerCommand;
    this.#inheritEnv = deps.inheritEnv ?? DEFAULT_INHERITED;
    this.#extraEnv = deps.extraEnv ?? {};
    // The scratch volume runners would share: each gets a directory of its own there, which this executor removes as it does the work dir.
    const scratchRoot =
      this.#extraEnv[RUNNER_ENV.scratchDir] ?? (this.#inheritEnv.includes(RUNNER_ENV.scratchDir) ? process.env[RUNNER_ENV.scratchDir] : undefined);
    this.#dirs = new LocalRunDirs(deps.dataDir, deps.monotonicNow, scratchRoot);
    this.#logger = deps.logger ?? silentLogger;
    this.#concurrency = Math.max(1, deps.concurrency ?? 4);
    this.#killGraceMs = deps.killGraceMs ?? 10_000;
    this.#retainFinishedMs = deps.retainFinishedMs ?? 900_000;
    this.#leaseTtlMs = deps.leaseTtlMs ?? 15_000;
    this.#landedCommits = deps.landedCommits;
    this.#queueKey = deps.queueKey ?? generateQueueKey();
    parseQueueKey(this.#queueKey, 'queueKey');
    this.#queue = deps.queue ?? new MemoryRunQueue();
  }

  /** The result file of a run. */
  resultFileOf(id: string): string {
    return this.#dirs.resultFileOf(id);
  }

  /** The runner's owner lease. */
  leaseFileOf(id: string): string {
    return this.#dirs.leaseFileOf(id);
  }

  /** Where the runner clones; removed when it has exited. */
  workDirOf(id: string): string {
    return this.#dirs.workDirOf(id);
  }

  /**
   * Queues the run, then starts the oldest waiting runs this executor has
   * room for. Resolves once the run is queued (and started, when there is
   * room). Idempotent per run id: a run queued before is not queued again.
   * @throws ValidationError when the secrets ask for something a local process cannot do (a kubeconfig Secret reference)
   * @throws UnavailableError after close(), or when the queue cannot be written
   */
  async start(run: RunRecord, secrets: RunSecrets): Promise<{ readonly job: string }> {
    if (this.#closed) throw new UnavailableError('the service is shutting down; runs cannot start now');
    if (this.#executions.has(run.id)) return { job: run.job };
    if (secrets.kubeconfig?.kind === 'secretRef') {
      throw new ValidationError([{ field: 'kubeconfig.secretRef', message: 'is not supported by the local executor; send kubeconfig.inline' }]);
    }
    await this.#queue.enqueue(run, secrets);
    await this.#drain();
    return { job: run.job };
  }

  /**
   * Starts the waiting runs this executor has room for: at service start,
   * those a stopped or crashed service left in the queue.
   */
  resume(): Promise<void> {
    return this.#closed ? Promise.resolve() : this.#drain();
  }

  async inspect(run: RunRecord): Promise<ExecutionState> {
    let execution = this.#executions.get(run.id);
    if (execution === undefined) {
      if (await this.#queue.isQueued(run.id)) return { state: 'pending' };
      // Claimed between the two looks: by this executor (now in memory, or about to be), or by another one.
      execution = this.#executions.get(run.id);
      if (execution === undefined && this.#claiming) return { state: 'pending' };
    }
    if (execution?.phase === 'starting') return { state: 'pending' };
    if (execution?.phase === 'running' || execution?.phase === 'closing') return { state: 'running' };
    const { text, result } = await this.#dirs.readResult(run.id);
    if (result !== undefined) return { state: result.status, result };
    // Not started by this process (e.g. before a restart): its lease tells whether the runner still works.
    if (execution === undefined)
      return this.#dirs.inspectUnowned(run, { leaseTtlMs: this.#leaseTtlMs, landed: () => this.#landed(run, undefined), logger: this.#logger });
    const exit = execution.exit;
    const how = exit?.error
      ? `could not start the runner: ${exit.error}`
      : exit?.cancelled
        ? 'the run was cancelled'
        : exit?.signal
          ? `the runner was killed by ${exit.signal} before writing a result`
          : text
            ? `the runner exited with code ${exit?.code ?? 'unknown'} and wrote a malformed result file`
            : `the runner exited with code ${exit?.code ?? 'unknown'} without writing a result`;
    const last = lastEventOf(execution.lines).message;
    return {
      state: 'failed',
      result: {
        status: 'failed',
        message: last === undefined || exit?.cancelled ? how : `${how}; last event: ${last}`,
        ...(execution.landed ? { commits: execution.landed } : {}),
      },
    };
  }

  /**
   * The child's stdout and stderr lines from its start: one unnamed source (no
   * source lines, see `output-source.ts`). For a run this process did not
   * start (before a restart) or has forgotten (`retainFinishedMs`), read from
   * its output file, followed while the process its lease names is alive: a
   * runner that outlived the service that started it loses no line.
   */
  async *logs(run: RunRecord, options: { readonly follow: boolean; readonly signal?: AbortSignal }): AsyncIterable<string> {
    const { follow, signal } = options;
    const execution = this.#executions.get(run.id);
    if (execution === undefined) {
      const lease = follow ? await readLease(this.#dirs.leaseFileOf(run.id)) : undefined;
      // The pid is read once: a lease released before the runner's last lines must not end the read early.
      const pid = lease?.run_id === run.id ? lease.pid : undefined;
      yield* tailLines(this.#dirs.outputFileOf(run.id), { until: () => pid === undefined || !processAlive(pid), ...(signal === undefined ? {} : { signal }) });
      return;
    }
    let index = 0;
    for (;;) {
      while (index < execution.lines.length) yield execution.lines[index++] as string;
      if (!follow || execution.phase === 'exited' || signal?.aborted) {
        // Lines that arrived while the last one was being consumed.
        while (index < execution.lines.length) yield execution.lines[index++] as string;
        return;
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        execution.waiters.push(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** Kills the run's process group: SIGTERM, then SIGKILL after the grace period. Resolves when it has exited. */
  async cancel(run: RunRecord): Promise<void> {
    let execution = this.#executions.get(run.id);
    if (execution === undefined) {
      if (await this.#queue.drop(run.id)) {
        // Dropped without ever starting; remembered so inspect() reports it cancelled.
        this.#finish(this.#track(run, undefined), { code: null, signal: null, cancelled: true });
        return;
      }
      // A claim in flight may be taking it: it is then in memory once the pass is done.
      await this.#draining;
      execution = this.#executions.get(run.id);
      if (execution === undefined) return this.#dirs.stopUnowned(run, this.#killGraceMs);
    }
    if (execution.phase === 'exited') return;
    if (execution.phase === 'starting') {
      execution.secrets = undefined;
      this.#finish(execution, { code: null, signal: null, cancelled: true });
      return;
    }
    if (execution.exit === undefined) execution.exit = { code: null, signal: null, cancelled: true };
    else execution.exit.cancelled = true;
    await this.#kill(execution);
  }

  /**
   * Service shutdown: stops every running run (they would otherwise outlive the
   * service and be reported lost anyway). Runs still waiting stay in the queue
   * for the next executor on the same store.
   */
  async close(): Promise<void> {
    this.#closed = true;
    // A claim in flight ends with its run started, and stopped below, rather than taken and forgotten.
    await this.#draining;
    await Promise.all([...this.#executions.values()].filter((e) => e.phase === 'running' || e.phase === 'closing').map((e) => this.#kill(e)));
  }

  /** Runs a drain pass, or asks the one in progress for another round. Never rejects. */
  #drain(): Promise<void> {
    this.#drainAgain = true;
    this.#draining ??= this.#drainPasses().finally(() => {
      this.#draining = undefined;
      // Asked for after the last round looked.
      if (this.#drainAgain && !this.#closed) void this.#drain();
    });
    return this.#draining;
  }

  async #drainPasses(): Promise<void> {
    while (this.#drainAgain) {
      this.#drainAgain = false;
      while (!this.#closed && this.#slots < this.#concurrency) {
        // The slot is taken before the claim, so two passes never claim past the limit.
        this.#slots++;
        let claimed: ClaimedRun | undefined;
        this.#claiming = true;
        try {
          claimed = await this.#queue.claim(this.#owner);
        } catch (error) {
          this.#slots--;
          // The run stays queued: the next start, exit or resume() claims it.
          this.#logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not take a run off the queue');
          return;
        } finally {
          this.#claiming = false;
        }
        if (claimed === undefined) {
          this.#slots--;
          break;
        }
        await this.#begin(claimed);
      }
    }
  }

  /** Prepares a claimed run's directory and spawns its runner; the run holds the slot its claim took. */
  async #begin(claimed: ClaimedRun): Promise<void> {
    const { run } = claimed;
    const execution = this.#track(run, 'secrets' in claimed ? claimed.secrets : undefined);
    execution.holdsSlot = true;
    if ('unreadable' in claimed) {
      this.#finish(execution, { code: null, signal: null, error: claimed.unreadable });
      return;
    }
    try {
      // A run directory private to the service's user; the runner writes its result there.
      await this.#dirs.prepare(run.id);
    } catch (error) {
      execution.secrets = undefined;
      this.#finish(execution, { code: null, signal: null, error: error instanceof Error ? error.message : String(error) });
      return;
    }
    // Not when it was cancelled while its directory was prepared.
    if (execution.phase === 'starting') this.#spawn(execution);
  }

  /** A new in-memory record of `run`, looked up by inspect(), logs() and cancel(). */
  #track(run: RunRecord, secrets: RunSecrets | undefined): Execution {
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => {
      markExited = resolve;
    });
    const execution: Execution = {
      run,
      secrets,
      credentials: secrets?.repositoryCredentials,
      phase: 'starting',
      holdsSlot: false,
      lines: [],
      processGone: false,
      waiters: [],
      exited,
      markExited,
    };
    this.#executions.set(run.id, execution);
    return execution;
  }

  #spawn(execution: Execution): void {
    const { run } = execution;
    const secrets = execution.secrets ?? {};
    execution.secrets = undefined;
    const scratchDir = this.#dirs.scratchDirOf(run.id);
    const env: Record<string, string> = {};
    for (const name of this.#inheritEnv) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    Object.assign(env, this.#extraEnv, runEnvOf(run), secretEnvOf(secrets), queueKeyEnvOf(this.#queueKey), runOptionsEnvOf(secrets), {
      [RUNNER_ENV.resultFile]: this.resultFileOf(run.id),
      [RUNNER_ENV.leaseFile]: this.leaseFileOf(run.id),
      [RUNNER_ENV.workDir]: this.workDirOf(run.id),
      ...(scratchDir !== undefined ? { [RUNNER_ENV.scratchDir]: scratchDir } : {}),
    });
    let child: ChildProcess;
    const outputFile = this.#dirs.outputFileOf(run.id);
    let output: number | undefined;
    try {
      // stdout and stderr are one file (stderr merged, as Kubernetes does for a Job's pod), not pipes:
      // a runner that outlives this process keeps writing where the next one reads.
      output = openSync(outputFile, 'a', 0o600);
      child = spawn(this.#runnerCommand.command, [...this.#runnerCommand.args], {
        env,
        cwd: this.#dirs.runDirOf(run.id),
        stdio: ['ignore', output, output],
        // Its own process group, so cancel() reaches the git processes it spawns too.
        detached: true,
      });
    } catch (error) {
      this.#finish(execution, { code: null, signal: null, error: error instanceof Error ? error.message : String(error) });
      return;
    } finally {
      if (output !== undefined) closeSync(output);
    }
    execution.child = child;
    execution.phase = 'running';
    this.#wake(execution);
    execution.reading = (async () => {
      for await (const line of tailLines(outputFile, { until: () => execution.processGone })) {
        if (execution.lines.length < MAX_LINES) execution.lines.push(line);
        this.#wake(execution);
      }
    })().catch((error: unknown) => {
      this.#logger.warn({ run: run.id, err: error instanceof Error ? error.message : String(error) }, 'could not read the runner output file');
    });
    const gone = async (code: number | null, signal: NodeJS.Signals | null): Promise<void> => {
      execution.processGone = true;
      // Every line is in `lines` before the run counts as exited.
      await execution.reading;
      this.#onExit(execution, code, signal);
    };
    child.on('error', (error) => {
      // spawn failures (ENOENT, EACCES) arrive here, not as a throw.
      execution.exit = { ...(execution.exit ?? { code: null, signal: null }), error: error.message };
      if (child.pid === undefined) void gone(null, null);
    });
    // A runner that died (even by SIGKILL) may leave a `git push` in its group: it must not push on alone.
    child.on('exit', () => {
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
    });
    child.on('close', (code, signal) => void gone(code, signal));
    this.#logger.info({ run: run.id, pid: child.pid }, 'runner process started');
  }

  #onExit(execution: Execution, code: number | null, signal: NodeJS.Signals | null): void {
    if (execution.phase === 'exited' || execution.phase === 'closing') return;
    execution.phase = 'closing';
    void this.#cleanUp(execution).finally(() => {
      this.#finish(execution, { ...execution.exit, code, signal });
      this.#logger.info({ run: execution.run.id, code, signal }, 'runner process exited');
    });
  }

  /**
   * After the runner exited: removes its working copy and lease, and when it
   * left no result, reads what it landed on the remote. The run counts as
   * running until this is done, so its outcome is recorded once, complete.
   */
  async #cleanUp(execution: Execution): Promise<void> {
    const { run } = execution;
    const credentials = execution.credentials;
    execution.credentials = undefined;
    await this.#dirs.removeLeftovers(run.id);
    if (execution.exit?.cancelled || execution.exit?.error !== undefined) return;
    if ((await this.#dirs.readResult(run.id)).result !== undefined) return;
    const landed = await this.#landed(run, credentials);
    if (landed !== undefined) execution.landed = landed;
  }

  /** What the remote holds of `run`, or undefined when it cannot be read (the log's commits stand then). */
  async #landed(run: RunRecord, credentials: RunSecrets['repositoryCredentials']): Promise<readonly RunCommit[] | undefined> {
    if (this.#landedCommits === undefined) return undefined;
    try {
      return await this.#landedCommits({
        repositoryUrl: run.repositoryUrl,
        branch: run.branch,
        runId: run.id,
        attempt: run.attempt,
        cluster: run.cluster.name,
        queueKey: parseQueueKey(this.#queueKey, 'queueKey'),
        scratchDir: this.#dirs.runDirOf(run.id),
        ...(credentials === undefined
          ? {}
          : { credentials: { kind: 'token', token: credentials.token, ...(credentials.username === undefined ? {} : { username: credentials.username }) } }),
      });
    } catch (error) {
      this.#logger.warn({ run: run.id, err: error instanceof Error ? error.message : String(error) }, 'could not read what the run landed on its branch');
      return undefined;
    }
  }

  #finish(execution: Execution, exit: NonNullable<Execution['exit']>): void {
    execution.exit = exit;
    execution.phase = 'exited';
    execution.markExited();
    this.#wake(execution);
    if (execution.holdsSlot) {
      execution.holdsSlot = false;
      this.#slots--;
      // Its slot goes to the oldest waiting run.
      if (!this.#closed) void this.#drain();
    }
    const timer = setTimeout(() => {
      if (this.#executions.get(execution.run.id) === execution) this.#executions.delete(execution.run.id);
    }, this.#retainFinishedMs);
    timer.unref();
  }

  #wake(execution: Execution): void {
    const waiters = execution.waiters;
    execution.waiters = [];
    for (const wake of waiters) wake();
  }

  async #kill(execution: Execution): Promise<void> {
    const pid = execution.child?.pid;
    if (pid === undefined || execution.phase === 'exited') return;
    if (execution.phase === 'closing') {
      await execution.exited;
      return;
    }
    signalGroup(pid, 'SIGTERM');
    const grace = setTimeout(() => signalGroup(pid, 'SIGKILL'), this.#killGraceMs);
    grace.unref();
    await execution.exited;
    clearTimeout(grace);
    // The runner may have left children in its group that ignore SIGTERM.
    signalGroup(pid, 'SIGKILL');
  }
}
