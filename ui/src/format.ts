/** Human-readable times and durations for the dashboard. */

/** 850 ms, 4.2 s, 3 min 12 s, 2 h 5 min. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** "12 s ago", "3 min ago", "2 h ago", "5 d ago". */
export function formatAge(iso: string, now: number): string {
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return '–';
  if (ms < 5_000) return 'just now';
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}

/** A run's duration: start to finish, or start to now while it runs. */
export function runDuration(run: { started_at: string | null; finished_at: string | null; created_at: string }, now: number): number | undefined {
  const start = run.started_at ?? (run.finished_at === null ? null : run.created_at);
  if (start === null) return undefined;
  const end = run.finished_at === null ? now : Date.parse(run.finished_at);
  return Math.max(0, end - Date.parse(start));
}

/** Local date and time, to the second. */
export function formatDateTime(iso: string | null): string {
  if (iso === null) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '–' : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** HH:MM:SS.mmm, local time: the log view's time column. */
export function formatClock(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

export const shortSha = (sha: string): string => sha.slice(0, 12);
