/**
 * Starting short-lived child processes (git, kubectl) and collecting their
 * output, without forking this process for each one.
 *
 * Node starts every child with fork(): the kernel copies the page tables of
 * the whole process first, so a spawn costs system time in proportion to the
 * spawner's memory (0.4 ms at 55 MB, 3 ms at 270 MB, 12 ms at 830 MB on the
 * 2-core bench machine), and the event loop waits for it. A runner at 250 MB
 * starts some forty processes a run; the service's bench process holds fifty
 * runs at once. So the children are started by a small helper process
 * (spawn-helper.ts), started once and kept for the life of this one:
 * a request and the child's output cross a pipe, and the fork that happens is
 * the helper's. Where the helper cannot run, {@link directLauncher} spawns in
 * this process, exactly as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** One child to run to its end. */
export interface ChildRequest {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The child's whole environment (its PATH also finds `command`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  readonly input?: string;
  /** A process group of its own (so a kill reaches what it started), else the launcher's. */
  readonly ownGroup: boolean;
  /** More stdout than this kills the child; its outcome says `overflow`. */
  readonly maxStdoutBytes?: number;
  /** Stderr is kept up to about this much; the rest is dropped. */
  readonly maxStderrBytes?: number;
}

/** How a child ended, with what it wrote (UTF-8). */
export interface ChildOutcome {
  readonly stdout: string;
  readonly stderr: string;
  /** null when a signal ended it. */
  readonly code: number | null;
  readonly signal: string | null;
  /** It wrote more than `maxStdoutBytes` and was killed. */
  readonly overflow: boolean;
}

/** The child could not be started: `code` is the errno name (ENOENT: no such program, or no such working directory). */
export class ChildStartError extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ChildStartError';
  }
}

/** A started child. */
export interface RunningChild {
  /** Settles when the child has ended and its pipes closed; rejects with {@link ChildStartError} when it could not start. */
  readonly outcome: Promise<ChildOutcome>;
  /** SIGKILL to its group (or to it alone, in the launcher's group); harmless once it has ended. */
  kill(): void;
}

export interface ChildLauncher {
  start(request: ChildRequest): RunningChild;
}

/** Collects a stream's chunks up to a byte budget. */
export class BoundedChunks {
  readonly #chunks: Buffer[] = [];
  #bytes = 0;

  constructor(readonly limit: number = Number.POSITIVE_INFINITY) {}

  /** Keeps `chunk` when it fits; false when the budget was already spent. */
  push(chunk: Buffer): boolean {
    if (this.#bytes >= this.limit) return false;
    this.#bytes += chunk.length;
    this.#chunks.push(chunk);
    return true;
  }

  get bytes(): number {
    return this.#bytes;
  }

  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

/** Spawns in this process: the fork copies this process's page tables. */
export const directLauncher: ChildLauncher = {
  start(request) {
    let pid: number | undefined;
    let ended = false;
    const outcome = new Promise<ChildOutcome>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(request.command, [...request.args], {
          cwd: request.cwd,
          env: request.env,
          stdio: [request.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
          detached: request.ownGroup,
          windowsHide: true,
        });
      } catch (error) {
        // Arguments spawn refuses outright (a NUL byte): the child never existed.
        const { code, message } = error as NodeJS.ErrnoException;
        return reject(new ChildStartError(code, message));
      }
      pid = child.pid;
      const stdout = new BoundedChunks();
      const stderr = new BoundedChunks(request.maxStderrBytes);
      let overflow = false;
      child.stdout!.on('data', (chunk: Buffer) => {
        if (overflow) return;
        stdout.push(chunk);
        if (request.maxStdoutBytes !== undefined && stdout.bytes > request.maxStdoutBytes) {
          overflow = true;
          kill();
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.on('error', (error: NodeJS.ErrnoException) => {
        ended = true;
        reject(new ChildStartError(error.code, error.message));
      });
      child.on('close', (code, signal) => {
        ended = true;
        resolve({ stdout: overflow ? '' : stdout.text(), stderr: stderr.text(), code, signal, overflow });
      });
      if (child.stdin) {
        // The child may exit before reading all of its input (git on a usage error).
        child.stdin.on('error', () => {});
        child.stdin.end(request.input);
      }
    });
    const kill = (): void => {
      if (pid === undefined || ended) return;
      try {
        process.kill(request.ownGroup ? -pid : pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    return { outcome, kill };
  },
};
