/**
 * Reading a run's stored log: page by page, following it until the run is
 * final, and folding its step events into the run's steps incrementally.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { LogLine, RunStore } from './run-store.js';
import { runStepsOf, type RunStep } from './run-steps.js';
import { isFinal, type RunRecord } from '../run/run-record.js';

/** Options for reading a run's logs. */
export interface LogReadOptions {
  /** Keep yielding new lines until the run is final. @default false */
  readonly follow?: boolean;
  /** Start after this line number. @default 0 */
  readonly afterSeq?: number;
  readonly signal?: AbortSignal;
}

const LOG_PAGE = 500;
/** Runs whose step events {@link RunLogReader.steps} keeps between calls. */
const TIMELINES = 1000;

/** What {@link RunLogReader.steps} has read of a run's log: its step events, up to line `seq`. */
interface Timeline {
  seq: number;
  readonly events: { readonly time: Date; readonly line: string }[];
}

/** The log reads of the scaffold service. */
export class RunLogReader {
  readonly #store: RunStore;
  readonly #logPollMs: number;
  /** Least recently used first. */
  readonly #timelines = new Map<string, Timeline>();

  constructor(store: RunStore, logPollMs: number) {
    this.#store = store;
    this.#logPollMs = logPollMs;
  }

  /**
   * The run's seven steps, folded from the step events of its log (see
   * `runStepsOf`). Incremental: the step events read so far are kept for the
   * last {@link TIMELINES} runs asked about, and only lines after the last one
   * read are fetched, so a poll that finds nothing new reads nothing (with a
   * `CachedRunStore`, which knows where a log ends, not even a query). Asking
   * for the steps of a run this way costs one read of its new lines instead of
   * a read of its whole log.
   */
  async steps(run: RunRecord): Promise<RunStep[]> {
    let timeline = this.#timelines.get(run.id);
    if (timeline === undefined) {
      timeline = { seq: 0, events: [] };
    } else {
      this.#timelines.delete(run.id);
    }
    this.#timelines.set(run.id, timeline);
    if (this.#timelines.size > TIMELINES) this.#timelines.delete(this.#timelines.keys().next().value as string);
    for (;;) {
      const lines = await this.#store.readLogs(run.id, { afterSeq: timeline.seq, limit: LOG_PAGE });
      for (const line of lines) {
        // A concurrent call may have taken these lines already.
        if (line.seq <= timeline.seq) continue;
        timeline.seq = line.seq;
        if (isStepEvent(line)) timeline.events.push({ time: line.time, line: line.line });
      }
      if (lines.length < LOG_PAGE) break;
    }
    return runStepsOf(timeline.events, run.status, run.action);
  }

  /**
   * The run's log lines after `afterSeq`; with `follow`, polls the store until
   * the run is final (the run monitor writes every line before it records the
   * final status, so nothing is cut off) or `signal` aborts.
   */
  async *read(id: string, options: LogReadOptions): AsyncGenerator<LogLine> {
    const { follow = false, signal } = options;
    let seq = options.afterSeq ?? 0;
    for (;;) {
      if (signal?.aborted) return;
      const lines = await this.#store.readLogs(id, { afterSeq: seq, limit: LOG_PAGE });
      for (const line of lines) {
        seq = line.seq;
        yield line;
      }
      if (lines.length === LOG_PAGE) continue;
      if (!follow) return;
      const run = await this.#store.get(id);
      if (run === undefined || isFinal(run.status)) {
        // Lines written before the final status are all stored now: drain them.
        for (;;) {
          const rest = await this.#store.readLogs(id, { afterSeq: seq, limit: LOG_PAGE });
          for (const line of rest) {
            seq = line.seq;
            yield line;
          }
          if (rest.length < LOG_PAGE) return;
        }
      }
      try {
        await sleep(this.#logPollMs, undefined, signal === undefined ? {} : { signal });
      } catch {
        return; // aborted
      }
    }
  }
}

/** Whether a log line is one of the runner's step events: it moves a step out of `pending`. */
function isStepEvent(line: { readonly time: Date; readonly line: string }): boolean {
  // Cheap refusal first: every event is a JSON object on its line.
  return line.line.startsWith('{') && runStepsOf([line], 'running').some((step) => step.status !== 'pending');
}
