/**
 * The spawn helper: a small Node process, started once, that starts children
 * on this process's behalf (child-launcher.ts says why). Both sides of its
 * pipe are here: {@link HelperLauncher} in the process that wants children,
 * {@link serveLaunches} in the helper (spawn-helper-main.ts).
 *
 * The helper stays in its parent's process group, so a kill of the parent's
 * group (the executor ending a runner) reaches it and every child it started
 * there; children with a group of their own are killed by the helper when its
 * parent goes away, whichever way it went.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type ChildLauncher, type ChildOutcome, type ChildRequest, ChildStartError, type RunningChild, directLauncher } from './child-launcher.js';

type ToHelper = { readonly kind: 'start'; readonly id: number; readonly request: ChildRequest } | { readonly kind: 'kill'; readonly id: number };
type FromHelper =
  | { readonly kind: 'outcome'; readonly id: number; readonly outcome: ChildOutcome }
  | { readonly kind: 'failed'; readonly id: number; readonly code: string | undefined; readonly message: string };

/** The helper's side: start each requested child with the direct launcher and send back how it ended. */
export function serveLaunches(): void {
  const running = new Map<number, RunningChild>();
  const reply = (message: FromHelper): void => {
    if (process.connected) process.send!(message);
  };
  process.on('message', (message: ToHelper) => {
    if (message.kind === 'kill') return running.get(message.id)?.kill();
    const { id, request } = message;
    const child = directLauncher.start(request);
    running.set(id, child);
    child.outcome
      .then(
        (outcome) => reply({ kind: 'outcome', id, outcome }),
        (error: unknown) => {
          const failure = error instanceof ChildStartError ? error : new ChildStartError(undefined, String(error));
          reply({ kind: 'failed', id, code: failure.code, message: failure.message });
        },
      )
      .finally(() => running.delete(id));
  });
  // The parent is gone (exited, crashed, killed): nobody will read these children's output.
  process.on('disconnect', () => {
    for (const child of running.values()) child.kill();
    process.exit(0);
  });
}

/** How to start the helper: node on spawn-helper-main, compiled or (in development) through tsx. */
function helperCommand(): { command: string; args: string[] } {
  const self = import.meta.url;
  const typescript = self.endsWith('.ts');
  const main = fileURLToPath(new URL(`./spawn-helper-main.${typescript ? 'ts' : 'js'}`, self));
  return { command: process.execPath, args: [...(typescript ? ['--import', import.meta.resolve('tsx')] : []), main] };
}

interface Pending {
  readonly resolve: (outcome: ChildOutcome) => void;
  readonly reject: (error: ChildStartError) => void;
}

/**
 * Starts children through the helper, which it starts on first use and again
 * after it died. It never keeps this process alive: its pipe is referenced
 * only while a child runs.
 */
export class HelperLauncher implements ChildLauncher {
  #helper: ChildProcess | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #reaping = false;

  constructor(private readonly entry: { readonly command: string; readonly args: readonly string[] } = helperCommand()) {}

  start(request: ChildRequest): RunningChild {
    const helper = this.#connect();
    const id = this.#nextId++;
    const outcome = new Promise<ChildOutcome>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#hold();
    this.#send(helper, { kind: 'start', id, request });
    return {
      outcome,
      kill: () => {
        if (this.#pending.has(id) && this.#helper === helper) this.#send(helper, { kind: 'kill', id });
      },
    };
  }

  /** Ends the helper (its children are killed with it); the next start makes a new one. */
  close(): void {
    if (this.#helper?.connected === true) this.#helper.disconnect();
  }

  #connect(): ChildProcess {
    if (this.#helper !== undefined) return this.#helper;
    if (!this.#reaping) {
      // When this process is about to exit by itself, it ends the helper and waits for it: an exited parent's
      // helper would be reaped by init, and what it and its children cost would leave this process's accounts.
      this.#reaping = true;
      process.on('beforeExit', () => {
        this.#helper?.ref();
        this.close();
      });
    }
    // Nothing of this process's environment: every request carries its child's.
    const helper = spawn(this.entry.command, [...this.entry.args], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced', env: {} });
    helper.on('message', (message: FromHelper) => this.#settle(message));
    const lost = (why: string): void => {
      if (this.#helper !== helper) return;
      this.#helper = undefined;
      for (const [id, pending] of this.#pending) {
        this.#pending.delete(id);
        pending.reject(new ChildStartError(undefined, `the spawn helper ${why}`));
      }
    };
    helper.on('error', (error: NodeJS.ErrnoException) => lost(`could not run: ${error.code ?? error.message}`));
    helper.on('exit', (code, signal) => lost(`stopped (${signal ?? `exit code ${code}`})`));
    this.#helper = helper;
    return helper;
  }

  #send(helper: ChildProcess, message: ToHelper): void {
    try {
      helper.send(message, (error) => {
        if (error && message.kind === 'start')
          this.#settle({ kind: 'failed', id: message.id, code: undefined, message: `the spawn helper is unreachable: ${error.message}` });
      });
    } catch (error) {
      if (message.kind === 'start')
        this.#settle({ kind: 'failed', id: message.id, code: undefined, message: `the spawn helper is unreachable: ${String(error)}` });
    }
  }

  #settle(message: FromHelper): void {
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    if (message.kind === 'outcome') pending.resolve(message.outcome);
    else pending.reject(new ChildStartError(message.code, message.message));
    this.#hold();
  }

  /** The helper (its pipe, and its exit, which fails what was in flight) keeps this process alive while a child runs, and only then. */
  #hold(): void {
    const helper = this.#helper;
    if (helper === undefined) return;
    if (this.#pending.size > 0) {
      helper.ref();
      helper.channel?.ref();
    } else {
      helper.unref();
      helper.channel?.unref();
    }
  }
}

let shared: ChildLauncher | undefined;

/** The launcher this process's git and kubectl children go through: one helper for the whole process, unless {@link useChildLauncher} set another. */
export function childLauncher(): ChildLauncher {
  shared ??= new HelperLauncher();
  return shared;
}

/** Makes `launcher` the one {@link childLauncher} returns: set by a composition root before its first child. */
export function useChildLauncher(launcher: ChildLauncher): void {
  shared = launcher;
}
