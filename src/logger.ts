/**
 * The logging port. Composition roots pick the implementation (pino); core and
 * app code only see this interface, so tests can capture events.
 *
 * Fields must never carry a credential.
 */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything; the default where logging is optional. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
