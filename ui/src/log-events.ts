/**
 * What the log view shows of a runner line. The runner writes one JSON event a
 * line; only a fixed set of fields is read from it (time, level, msg, event,
 * step, step_name, pass, sha, duration_ms, error_code, and the `error` a
 * warning carries: a string, or an object's message, code and reason; of a
 * `kustomization` event, its namespace, name, phase, ready, reason and revision; of a `credential`
 * event, its namespace, name, file, action and values). Every other field is
 * dropped here, before anything reaches the page: whatever a future log line
 * carries, the dashboard does not render it.
 */
// The step table and the event types are the run contract's, shared with the runner and the service.
import { isStepNumber } from '../../src/model/run-action';
import type { CommitEvent } from '../../src/run-contract/run-events';
import type { LogRecord } from './api';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'output';

export interface LogEntry {
  readonly seq: number;
  /** When the runner logged it (else when the service stored it). */
  readonly time: Date;
  readonly level: LogLevel;
  readonly message: string;
  readonly event?: string;
  readonly step?: number;
  readonly stepName?: string;
  readonly pass?: NonNullable<CommitEvent['pass']>;
  readonly sha?: string;
  readonly durationMs?: number;
  readonly errorCode?: string;
  /** Why a warning or error happened (`error` of the event), e.g. "HTTP 503 ServiceUnavailable". */
  readonly error?: string;
  /** A `kustomization` event (the wait for Flux Ready): one Kustomization's state at that moment. */
  readonly kustomization?: KustomizationState;
  /** A `credential` event: what the run did with one sealed credential. */
  readonly credential?: CredentialOutcome;
  /** Lower-case text the search box matches against. */
  readonly haystack: string;
}

/** One Kustomization as the runner observed it while waiting for Flux Ready. */
export interface KustomizationState {
  readonly namespace: string;
  readonly name: string;
  readonly phase: 'ready' | 'progressing' | 'failed';
  /** The Ready condition's status: True, False, Unknown. */
  readonly ready?: string;
  readonly reason?: string;
  /** `lastAppliedRevision`, e.g. `main@sha1:…`. */
  readonly revision?: string;
}

/**
 * One sealed credential as a run's render reported it: `generated` (sealed
 * with a fresh value), `reencrypted` (the same value, re-encrypted by the
 * cluster's controller), `kept`, `supplied` or `omitted`.
 */
export interface CredentialOutcome {
  readonly namespace: string;
  readonly name: string;
  readonly action: string;
  /** The SealedSecret's file, from the repository root. */
  readonly file?: string;
}

function credentialOf(object: Record<string, unknown>): CredentialOutcome | undefined {
  const namespace = str(object.namespace, 253);
  const name = str(object.name, 253);
  const action = str(object.action, 32);
  if (object.event !== 'credential' || namespace === undefined || name === undefined || action === undefined) return undefined;
  const file = str(object.file, 500);
  return { namespace, name, action, ...(file === undefined ? {} : { file }) };
}

function kustomizationOf(object: Record<string, unknown>): KustomizationState | undefined {
  const namespace = str(object.namespace, 253);
  const name = str(object.name, 253);
  const phase = object.phase;
  if (object.event !== 'kustomization' || namespace === undefined || name === undefined) return undefined;
  if (phase !== 'ready' && phase !== 'progressing' && phase !== 'failed') return undefined;
  const ready = str(object.ready, 16);
  const reason = str(object.reason, 100);
  const revision = str(object.revision, 300);
  return {
    namespace,
    name,
    phase,
    ...(ready === undefined ? {} : { ready }),
    ...(reason === undefined ? {} : { reason }),
    ...(revision === undefined ? {} : { revision }),
  };
}

const PINO_LEVELS: Readonly<Record<number, LogLevel>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const NAMED_LEVELS = new Set<LogLevel>(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
const MAX_TEXT = 4000;

const str = (value: unknown, max = 200): string | undefined => (typeof value === 'string' && value !== '' ? value.slice(0, max) : undefined);

/** The `error` of an event as one line of text: a string, or an object's message, code and reason. */
function errorText(value: unknown): string | undefined {
  if (typeof value === 'string') return str(value, 500);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const error = value as Record<string, unknown>;
  const parts = [str(error.message, 500), str(error.reason, 100), typeof error.code === 'number' ? `HTTP ${error.code}` : str(error.code, 64)].filter(
    (part) => part !== undefined,
  );
  return parts.length === 0 ? undefined : parts.join(' · ');
}

/** Reads the display fields of one stored line. */
export function logEntryOf(record: LogRecord): LogEntry {
  const stored = new Date(record.time);
  let object: Record<string, unknown> | undefined;
  if (record.line.startsWith('{')) {
    try {
      const value: unknown = JSON.parse(record.line);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) object = value as Record<string, unknown>;
    } catch {
      // Plain output that happens to start with "{".
    }
  }
  if (object === undefined) {
    // Not an event: the runner's own output (stderr is merged in), shown as text.
    const message = record.line.slice(0, MAX_TEXT);
    return { seq: record.seq, time: stored, level: 'output', message, haystack: message.toLowerCase() };
  }
  const time = typeof object.time === 'string' || typeof object.time === 'number' ? new Date(object.time) : stored;
  const level =
    typeof object.level === 'number'
      ? (PINO_LEVELS[object.level] ?? 'info')
      : typeof object.level === 'string' && NAMED_LEVELS.has(object.level as LogLevel)
        ? (object.level as LogLevel)
        : 'info';
  const step = isStepNumber(object.step) ? object.step : undefined;
  const sha = typeof object.sha === 'string' && /^[0-9a-f]{7,64}$/.test(object.sha) ? object.sha : undefined;
  const duration = typeof object.duration_ms === 'number' && Number.isFinite(object.duration_ms) ? Math.round(object.duration_ms) : undefined;
  const entry = {
    seq: record.seq,
    time: Number.isNaN(time.getTime()) ? stored : time,
    level,
    message: str(object.msg, MAX_TEXT) ?? '',
    ...(str(object.event) === undefined ? {} : { event: str(object.event) }),
    ...(step === undefined ? {} : { step }),
    ...(str(object.step_name) === undefined ? {} : { stepName: str(object.step_name) }),
    ...(object.pass === 'infrastructure' || object.pass === 'all' ? { pass: object.pass } : {}),
    ...(sha === undefined ? {} : { sha }),
    ...(duration === undefined ? {} : { durationMs: duration }),
    ...(str(object.error_code, 64) === undefined ? {} : { errorCode: str(object.error_code, 64) }),
    ...(errorText(object.error ?? object.err) === undefined ? {} : { error: errorText(object.error ?? object.err) }),
    ...(kustomizationOf(object) === undefined ? {} : { kustomization: kustomizationOf(object) }),
    ...(credentialOf(object) === undefined ? {} : { credential: credentialOf(object) }),
  };
  const haystack = [entry.message, entry.event, entry.stepName, entry.sha, entry.level, entry.errorCode, entry.error].filter(Boolean).join(' ').toLowerCase();
  return { ...entry, haystack } as LogEntry;
}
