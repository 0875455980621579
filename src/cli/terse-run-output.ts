/**
 * What a person at a terminal sees of a scaffold run: one line per step, the
 * commits, warnings and the outcome, instead of every JSON event pretty-printed.
 * It reads the runner's log events (one JSON object a line, as a pino
 * destination) and prints nothing it does not recognise below warn level, so
 * the machine-readable stream stays the contract and this stays a view of it.
 */
import type { DestinationStream } from 'pino';
import { colorAllowed, paint } from '../no-color.js';

const TOTAL_STEPS = 7;
const WARN = 40;

interface RunEvent {
  readonly level?: string | number;
  readonly event?: string;
  readonly step?: number;
  readonly step_name?: string;
  readonly duration_ms?: number;
  readonly status?: string;
  readonly msg?: string;
  readonly sha?: string;
  readonly pass?: string;
  readonly error?: { readonly message?: string } | string;
}

const LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

function seconds(ms: number | undefined): string {
  return ms === undefined ? '' : ` (${ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`})`;
}

/** The line for one event, or undefined when the event is not worth a line of its own. */
export function terseLine(event: RunEvent, color: boolean): string | undefined {
  const step = event.step === undefined ? '' : `${event.step}/${TOTAL_STEPS} ${event.step_name ?? ''}`.trimEnd();
  switch (event.event) {
    case 'step_finished':
      return `${paint(color, 32, '✓')} ${step}${seconds(event.duration_ms)}`;
    case 'step_skipped':
      return `${paint(color, 2, '-')} ${step} skipped: ${event.msg ?? ''}`;
    case 'step_failed':
      return `${paint(color, 31, '✗')} ${step} failed${seconds(event.duration_ms)}: ${event.msg ?? ''}`;
    case 'commit':
      return `  ${event.msg ?? `pass ${event.pass ?? ''} ${event.sha ?? ''}`}`;
    case 'run_finished':
      return `${event.status === 'succeeded' ? paint(color, 32, '==>') : paint(color, 31, '==>')} ${event.status ?? ''}: ${event.msg ?? ''}`;
    default: {
      const level = typeof event.level === 'number' ? event.level : (LEVELS[event.level ?? 'info'] ?? 30);
      if (level < WARN) return undefined;
      const detail = typeof event.error === 'string' ? event.error : event.error?.message;
      const label = level >= 50 ? paint(color, 31, 'error:') : paint(color, 33, 'warning:');
      return `${label} ${event.msg ?? ''}${detail !== undefined && detail !== '' ? ` (${detail})` : ''}`;
    }
  }
}

/** A pino destination printing {@link terseLine}s to `out`; a line that is not JSON is passed through. */
export function terseRunOutput(out: { write(text: string): unknown }, color: boolean): DestinationStream {
  return {
    write(chunk: string) {
      for (const text of chunk.split('\n')) {
        if (text.trim() === '') continue;
        let event: RunEvent;
        try {
          event = JSON.parse(text) as RunEvent;
        } catch {
          out.write(`${text}\n`);
          continue;
        }
        const line = terseLine(event, color);
        if (line !== undefined) out.write(`${line}\n`);
      }
    },
  };
}

/**
 * The logger destination for a run started by hand: terse lines when stdout is
 * a terminal, otherwise nothing (the default: one JSON event a line, which the
 * service and log collectors read).
 */
export function terminalOutput(): { destination?: DestinationStream } {
  return process.stdout.isTTY === true ? { destination: terseRunOutput(process.stdout, colorAllowed(process.stdout)) } : {};
}
