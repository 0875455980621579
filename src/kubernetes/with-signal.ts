/**
 * Cancellation for generated @kubernetes/client-node calls, which take no
 * AbortSignal of their own.
 */
import { Observable, type ConfigurationOptions } from '@kubernetes/client-node';

/** Per-call client options that tie the request to `signal`, so aborting really closes the socket. */
export function withSignal(signal: AbortSignal | undefined): ConfigurationOptions | undefined {
  if (!signal) return undefined;
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** What an aborted wait throws: the signal's reason, or a standard AbortError. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
