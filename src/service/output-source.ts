/**
 * Source lines: how an executor whose output comes from several places (a
 * Job's pods: the first try and each retry) tells a reader where one place's
 * output begins. Pure: no I/O.
 *
 * An executor writes one source line before the lines of each source, in the
 * runner's own format (one JSON event a line), so it is also plain, readable
 * log output: `{"event":"output_source","source":"pod/scaffold-…-x7k2p","msg":"…"}`.
 * Replaying a run's output must then replay each source from its start, but a
 * source may be missing from a later replay (a deleted pod): a reader that
 * counts lines per source (see `run-monitor.ts`) still skips exactly what it
 * already has. Output without source lines is one unnamed source.
 */

/** The `event` of a source line. */
export const OUTPUT_SOURCE_EVENT = 'output_source';

/** Where the lines after a source line come from. */
export interface OutputSource {
  /** Stable for the life of the run, e.g. `pod/scaffold-<id>-x7k2p`. Not empty. */
  readonly source: string;
  /** For people reading the log. */
  readonly msg?: string;
}

/** The source line announcing `source`. */
export function outputSourceLine(source: OutputSource): string {
  if (source.source === '') throw new RangeError('an output source needs a name');
  return JSON.stringify({ event: OUTPUT_SOURCE_EVENT, source: source.source, ...(source.msg === undefined ? {} : { msg: source.msg }) });
}

const PREFIX = `{"event":"${OUTPUT_SOURCE_EVENT}",`;

/** The source a line announces, or undefined for any other line. */
export function parseOutputSource(line: string): OutputSource | undefined {
  // Cheap test first: every stored line of a run passes through here.
  if (!line.startsWith(PREFIX)) return undefined;
  try {
    const value = JSON.parse(line) as { event?: unknown; source?: unknown; msg?: unknown };
    if (value.event !== OUTPUT_SOURCE_EVENT || typeof value.source !== 'string' || value.source === '') return undefined;
    return { source: value.source, ...(typeof value.msg === 'string' ? { msg: value.msg } : {}) };
  } catch {
    return undefined;
  }
}
