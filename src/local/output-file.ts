/**
 * A local runner's output file, `<run dir>/output.log`: the runner's stdout
 * and stderr are this file itself (not pipes to the service), so what a
 * runner prints after the service that started it died is still there for
 * the next service process to read, from the start.
 */
import { watch, type FSWatcher } from 'node:fs';
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/** Options of {@link tailLines}. */
export interface TailOptions {
  /**
   * Whether the writer is done. Checked before each read, so the read after
   * it first says true sees everything written, and is the last.
   */
  readonly until: () => boolean | Promise<boolean>;
  readonly signal?: AbortSignal;
  /**
   * Longest wait between two reads when no change is reported (a missed
   * inotify event, or `until` turning true without a write). @default 250
   */
  readonly pollMs?: number;
}

/**
 * The lines of the file at `path` from its start, following it as it grows
 * until `until()` says the writer is done (or `signal` aborts). A last line
 * without a newline is yielded at the end. Nothing when the file does not exist.
 */
export async function* tailLines(path: string, options: TailOptions): AsyncIterable<string> {
  const { until, signal, pollMs = 250 } = options;
  const handle = await open(path, 'r').catch(() => undefined);
  if (handle === undefined) return;
  let watcher: FSWatcher | undefined;
  let wake: (() => void) | undefined;
  try {
    // inotify on Linux: a write wakes the reader at once; the poll is a fallback.
    watcher = watch(path, () => wake?.());
    watcher.on('error', () => undefined);
  } catch {
    watcher = undefined;
  }
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.alloc(64 * 1024);
  let offset = 0;
  let partial = '';
  try {
    for (;;) {
      const done = (await until()) || signal?.aborted === true;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        if (bytesRead === 0) break;
        offset += bytesRead;
        partial += decoder.write(buffer.subarray(0, bytesRead));
        let end: number;
        while ((end = partial.indexOf('\n')) >= 0) {
          const line = partial.slice(0, end);
          partial = partial.slice(end + 1);
          yield line.endsWith('\r') ? line.slice(0, -1) : line;
        }
      }
      if (done) {
        partial += decoder.end();
        if (partial.length > 0) yield partial;
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, pollMs);
        function finish(): void {
          clearTimeout(timer);
          wake = undefined;
          signal?.removeEventListener('abort', finish);
          resolve();
        }
        wake = finish;
        signal?.addEventListener('abort', finish, { once: true });
      });
    }
  } finally {
    watcher?.close();
    await handle.close();
  }
}
