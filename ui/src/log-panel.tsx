/**
 * A run's log, followed live: `GET …/logs?follow=true&format=json` read as a
 * stream, resumed after the last line seen if the connection drops while the
 * run is active. Each line shows its time, level, step and message only (see
 * log-events.ts), with the reason a warning or error carries; the search box
 * filters lines. The whole log, as the runner wrote it, can be copied or saved.
 */
import type { ComponentChild } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, followLogs, logText } from './api';
import { messageOf } from './components';
import { formatClock, formatDuration, shortSha } from './format';
import { logEntryOf, type LogEntry } from './log-events';

/** Lines kept in the page; a runner printing more is misbehaving. */
const MAX_ENTRIES = 20_000;

type StreamState = 'connecting' | 'following' | 'ended' | 'retrying' | 'failed';

/** `onEntries`: every line received so far, for views the page derives from the log (Flux readiness). */
export function LogPanel({ runId, active, onEntries }: { runId: string; active: boolean; onEntries?: (entries: readonly LogEntry[]) => void }) {
  const [entries, setEntries] = useState<readonly LogEntry[]>([]);
  useEffect(() => onEntries?.(entries), [entries, onEntries]);
  const [stream, setStream] = useState<StreamState>('connecting');
  const [streamError, setStreamError] = useState<string | null>(null);
  const [query, setQuery] = useState('');
  const [follow, setFollow] = useState(true);
  const activeRef = useRef(active);
  activeRef.current = active;
  const box = useRef<HTMLDivElement>(null);
  const [saveNote, setSaveNote] = useState('');

  // The stored text, not the page's lines: every field of every event, exactly as written.
  const copyLog = async () => {
    try {
      await navigator.clipboard.writeText(await logText(runId));
      setSaveNote('Log copied to the clipboard.');
    } catch (error) {
      setSaveNote(`Could not copy the log: ${messageOf(error)}`);
    }
  };
  const downloadLog = async () => {
    try {
      const url = URL.createObjectURL(new Blob([await logText(runId)], { type: 'text/plain' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `scaffold-${runId}.log`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setSaveNote('Log saved.');
    } catch (error) {
      setSaveNote(`Could not save the log: ${messageOf(error)}`);
    }
  };

  useEffect(() => {
    const controller = new AbortController();
    let lastSeq = 0;
    let buffer: LogEntry[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    setEntries([]);
    const flush = () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (buffer.length === 0) return;
      const add = buffer;
      buffer = [];
      setEntries((previous) => {
        const next = previous.concat(add);
        return next.length > MAX_ENTRIES ? next.slice(next.length - MAX_ENTRIES) : next;
      });
    };
    const onRecord = (record: { seq: number; time: string; line: string }) => {
      if (typeof record.seq !== 'number' || record.seq <= lastSeq || typeof record.line !== 'string') return;
      lastSeq = record.seq;
      buffer.push(logEntryOf(record));
      timer ??= setTimeout(flush, 60);
    };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    void (async () => {
      let delay = 500;
      for (;;) {
        try {
          setStream('following');
          await followLogs(runId, lastSeq, onRecord, controller.signal);
          if (controller.signal.aborted) return;
          // Everything received is on the page before the state says so.
          flush();
          // The service ends a followed log when the run is final; while the page still
          // thinks it active (its next poll will tell), ask again shortly.
          if (!activeRef.current) {
            setStream('ended');
            return;
          }
          setStreamError(null);
          await sleep(500);
          delay = 500;
          continue;
        } catch (error) {
          if (controller.signal.aborted) return;
          setStreamError(messageOf(error));
          if (error instanceof ApiError && error.status < 500) {
            setStream('failed');
            return;
          }
          setStream('retrying');
        }
        await sleep(delay);
        delay = Math.min(delay * 2, 10_000);
        if (controller.signal.aborted) return;
      }
    })();
    return () => {
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [runId]);

  const needle = query.trim().toLowerCase();
  const shown = useMemo(() => (needle === '' ? entries : entries.filter((e) => e.haystack.includes(needle))), [entries, needle]);

  useEffect(() => {
    const element = box.current;
    if (follow && element !== null) element.scrollTop = element.scrollHeight;
  }, [shown, follow]);

  const onScroll = () => {
    const element = box.current;
    if (element === null) return;
    const atBottom = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
    if (!atBottom && follow) setFollow(false);
  };

  const streamText: Record<StreamState, string> = {
    connecting: 'Connecting…',
    following: active ? 'Following live' : 'Loading',
    ended: 'Complete',
    retrying: `Reconnecting${streamError === null ? '' : ` (${streamError})`}`,
    failed: `Cannot read the log: ${streamError ?? 'unknown error'}`,
  };

  return (
    <section class="card log-panel" aria-labelledby="log-heading">
      <div class="section-head">
        <h2 id="log-heading">Log</h2>
        <span class={`stream stream-${stream}`}>{streamText[stream]}</span>
      </div>
      <div class="toolbar">
        <div class="field inline grow">
          <label for="log-search">Search the log</label>
          <input
            id="log-search"
            type="search"
            value={query}
            onInput={(event) => setQuery((event.currentTarget as HTMLInputElement).value)}
            placeholder="message, event, step or SHA"
          />
        </div>
        <div class="field checkbox">
          <input id="log-follow" type="checkbox" checked={follow} onChange={(event) => setFollow((event.currentTarget as HTMLInputElement).checked)} />
          <label for="log-follow">Scroll with new lines</label>
        </div>
        <p class="muted log-count" role="status" aria-live="polite">
          {needle === '' ? `${entries.length} line${entries.length === 1 ? '' : 's'}` : `${shown.length} of ${entries.length} lines match`}
        </p>
        <div class="log-save">
          <button type="button" class="secondary" onClick={() => void copyLog()}>
            Copy the log
          </button>
          <button type="button" class="secondary" onClick={() => void downloadLog()}>
            Download the log
          </button>
          <span class="muted" role="status" aria-live="polite" data-testid="log-save-note">
            {saveNote}
          </span>
        </div>
      </div>
      <div class="log-box" ref={box} onScroll={onScroll} tabIndex={0} role="log" aria-live="off" aria-label="Run log lines">
        {shown.length === 0 ? (
          <p class="muted log-empty">
            {entries.length === 0 ? (active ? 'Waiting for the runner’s first line…' : 'No log lines.') : 'No line matches the search.'}
          </p>
        ) : (
          <ol class="log-lines">
            {shown.map((entry) => (
              <LogLine key={entry.seq} entry={entry} needle={needle} />
            ))}
          </ol>
        )}
      </div>
    </section>
  );
}

function LogLine({ entry, needle }: { entry: LogEntry; needle: string }) {
  return (
    <li class={`log-line level-${entry.level}`} data-seq={entry.seq}>
      <time dateTime={entry.time.toISOString()}>{formatClock(entry.time)}</time>
      <span class="log-level">{entry.level}</span>
      {entry.step !== undefined ? <span class="log-step">step {entry.step}</span> : <span class="log-step" />}
      <span class="log-msg">
        <Highlight text={entry.message} needle={needle} />
        {entry.event === 'commit' && entry.sha !== undefined && (
          <>
            {' '}
            <code class="sha" title={entry.sha}>
              {shortSha(entry.sha)}
            </code>
          </>
        )}
        {entry.durationMs !== undefined && <span class="muted"> ({formatDuration(entry.durationMs)})</span>}
        {entry.errorCode !== undefined && <span class="log-code"> [{entry.errorCode}]</span>}
        {entry.error !== undefined && (
          <span class="log-error" data-testid="log-error">
            {' '}
            <span class="sr-only">because: </span>
            <Highlight text={entry.error} needle={needle} />
          </span>
        )}
      </span>
    </li>
  );
}

function Highlight({ text, needle }: { text: string; needle: string }) {
  if (needle === '') return <>{text}</>;
  const lower = text.toLowerCase();
  const parts: ComponentChild[] = [];
  let from = 0;
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length)) {
    if (at > from) parts.push(text.slice(from, at));
    parts.push(<mark key={at}>{text.slice(at, at + needle.length)}</mark>);
    from = at + needle.length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return <>{parts}</>;
}
