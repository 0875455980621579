/**
 * Spawns in this process while it is small, through the spawn helper once it
 * has grown: what a process that starts small and may grow (a runner Job) pays
 * least for.
 *
 * A fork costs in proportion to the spawner's memory (child-launcher.ts), and
 * the helper costs a Node process of its own: a verified runner Job at about
 * 115 MB spent 0.12-0.14 CPU-s in its helper (start-up, its forks, the pipe)
 * against some 50 ms of forking its 25 children itself, measured whole-process
 * in the same rounds (bench/run-processes.ts). A batch upgrade of many
 * clusters grows past the limit, and its later children go through the helper.
 */
import { type ChildLauncher, type ChildRequest, type RunningChild, directLauncher } from './child-launcher.js';
import { HelperLauncher, useChildLauncher } from './spawn-helper.js';

/**
 * Resident memory up to which a runner forks its children itself; above it
 * (a batch upgrade of many clusters) they go through the spawn helper. A fork
 * at 256 MB costs about 3 ms, the helper a Node start-up of about 50 ms of CPU.
 */
export const RUNNER_DIRECT_SPAWN_LIMIT = 256 * 1024 * 1024;

/** Makes this process's children start as a runner's do: forked here while it is small, through the helper once it grew. */
export function useRunnerChildLauncher(): void {
  useChildLauncher(new SizeAwareLauncher({ limitBytes: RUNNER_DIRECT_SPAWN_LIMIT, helper: () => new HelperLauncher() }));
}

/** Options of {@link SizeAwareLauncher}. */
export interface SizeAwareLauncherOptions {
  /** Resident memory up to which a child is forked from this process. */
  readonly limitBytes: number;
  /** The launcher used from the first child started above the limit on: started then, and kept. */
  readonly helper: () => ChildLauncher;
  /** This process's resident memory. @default process.memoryUsage.rss */
  readonly residentBytes?: () => number;
}

export class SizeAwareLauncher implements ChildLauncher {
  #helper: ChildLauncher | undefined;

  constructor(private readonly options: SizeAwareLauncherOptions) {}

  start(request: ChildRequest): RunningChild {
    // Once grown, a process seldom shrinks back for long: the helper, once started, takes every later child.
    if (this.#helper === undefined && (this.options.residentBytes ?? process.memoryUsage.rss)() <= this.options.limitBytes) {
      return directLauncher.start(request);
    }
    this.#helper ??= this.options.helper();
    return this.#helper.start(request);
  }
}
