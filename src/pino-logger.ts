/**
 * The Logger port on pino: one JSON object a line (the runner's event stream and
 * the service's logs), or human-readable lines when writing to a terminal.
 * Credentials never reach it: callers log names and outcomes, not values, and
 * the redact list below catches the obvious fields should one slip in.
 */
import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from './logger.js';

/** How to build a logger. */
export interface PinoLoggerOptions {
  /** @default 'info' */
  readonly level?: string;
  /** Human-readable output. @default false */
  readonly pretty?: boolean;
  /** Where lines go. @default stdout, synchronously (no line is lost when the process exits) */
  readonly destination?: DestinationStream;
  /** Fields on every line. */
  readonly base?: Record<string, unknown>;
}

/** Paths pino censors wherever they appear. */
export const REDACT_PATHS = [
  'token',
  'password',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'credentials',
  '*.token',
  '*.password',
  '*.credentials',
  'kubeconfig',
  'certificate',
];

function adapt(instance: Pino): Logger {
  return {
    debug: (fields, message) => instance.debug(fields, message),
    info: (fields, message) => instance.info(fields, message),
    warn: (fields, message) => instance.warn(fields, message),
    error: (fields, message) => instance.error(fields, message),
    child: (bindings) => adapt(instance.child(bindings)),
  };
}

/** Creates the pino instance itself (Fastify wants one). */
export function createPino(options: PinoLoggerOptions = {}): Pino {
  const destination =
    options.destination ??
    (options.pretty ? pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) : pino.destination({ fd: 1, sync: true }));
  return pino(
    {
      level: options.level ?? 'info',
      base: options.base ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

/** Creates a Logger writing through pino. */
export function createPinoLogger(options: PinoLoggerOptions = {}): Logger {
  return adapt(createPino(options));
}

/** Wraps an existing pino instance as a Logger. */
export function loggerFromPino(instance: Pino): Logger {
  return adapt(instance);
}
