/** Small hooks shared by the pages. */
import { useEffect, useRef, useState } from 'preact/hooks';

/** Date.now(), refreshed every `ms` (ages and running durations tick). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/**
 * Calls `load` now and then every `intervalMs` while `active`, never two at a
 * time; pauses while the tab is hidden. `load` gets a signal aborted on unmount.
 */
export function usePolling(load: (signal: AbortSignal) => Promise<void>, intervalMs: number, active: boolean, key: unknown): void {
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let inFlight = false;
    const tick = async () => {
      if (stopped || inFlight) return;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (document.visibilityState !== 'hidden') {
        inFlight = true;
        try {
          await loadRef.current(controller.signal);
        } catch {
          // The page shows its own errors; polling carries on.
        } finally {
          inFlight = false;
        }
      }
      if (!stopped && active) timer = setTimeout(() => void tick(), intervalMs);
    };
    void tick();
    const onVisible = () => {
      if (document.visibilityState === 'visible' && active) void tick();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [intervalMs, active, key]);
}

/** Sets the document title while mounted. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · gitops-scaffolder`;
  }, [title]);
}

/**
 * The latest value of `get`, polled with {@link usePolling} while `active(value)`
 * holds, and the error of the last poll (cleared by the next success; an
 * aborted poll is no error).
 */
export function usePolledValue<T>(
  get: (signal: AbortSignal) => Promise<T>,
  intervalMs: number,
  active: (value: T | null) => boolean,
  key: unknown,
): { readonly value: T | null; readonly error: unknown } {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  usePolling(
    async (signal) => {
      try {
        setValue(await get(signal));
        setError(null);
      } catch (caught) {
        if (!signal.aborted) setError(caught);
      }
    },
    intervalMs,
    active(value),
    key,
  );
  return { value, error };
}

/** A button's action: `run(step)` marks it busy, clears the last error, and keeps the error `step` throws. */
export function useAction(): { readonly busy: boolean; readonly error: unknown; run(step: () => Promise<void>): Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (step: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await step();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
