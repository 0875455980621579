/**
 * The Logger port on pino: one JSON object a line (the runner's event stream and
 * the service's logs), or human-readable lines when writing to a terminal.
 * Credentials never reach it: callers log names and outcomes, not values, and
 * the redact list below catches the obvious fields should one slip in.
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { Logger } from './logger.js';
import { colorAllowed } from './no-color.js';

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

/**
 * Paths pino censors. Beside the obvious field names, the shapes credentials
 * travel in here: a request body (`repository.credentials`, `kubeconfig`,
 * `registry_pull_secret`), the service's RunSecrets (`repositoryCredentials`,
 * `registryDockerconfigjson`, …), an ssh `privateKey`, and a child process's
 * `env` (where the runner's SCAFFOLD_GIT_TOKEN lives). A wildcard costs time on
 * every line logged (two or three times the cost of the line, measured), so
 * whole bags (`body`, `secrets`, `env`) are censored at the top level and only
 * the commonest names under any one key (`*.token`); pino's `*` matches one
 * level. Log names and outcomes, never such objects.
 */
export const REDACT_PATHS = [
  'token',
  'password',
  'authorization',
  'cookie',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body',
  'body',
  'credentials',
  'repository.credentials',
  'kubeconfig',
  'certificate',
  'registry_pull_secret',
  'dockerconfigjson',
  'secrets',
  'repositoryCredentials',
  'registryDockerconfigjson',
  'registryAuth',
  // A notification Provider's webhook address: the URL is the credential.
  'notifications',
  'notificationAddress',
  'privateKey',
  'env',
  '*.token',
  '*.password',
  '*.credentials',
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

/**
 * pino-pretty, loaded only for a terminal: a Job's runner and the service log
 * JSON, and loading it cost every runner process 12 ms of CPU for nothing. It
 * is CommonJS, so a synchronous require keeps createPino synchronous.
 */
function prettyStream(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

/** Creates the pino instance itself (Fastify wants one). */
export function createPino(options: PinoLoggerOptions = {}): Pino {
  const destination =
    options.destination ??
    (options.pretty
      ? prettyStream()({ sync: true, colorize: colorAllowed(process.stdout), translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : pino.destination({ fd: 1, sync: true }));
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
