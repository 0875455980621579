/**
 * Waiting between polls or retries without holding up cancellation.
 */

/**
 * Resolves after `ms`, or at once when `signal` aborts (or has aborted): never
 * rejects, so a poll loop checks its signal after the pause and ends there.
 */
export function interruptibleSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
