/**
 * What a fault trial hands back, and the table `npm run chaos` prints: one row
 * per invariant a trial checked, held or violated, with the detail that shows
 * why (a violated invariant names the run, the commit or the needle).
 */

/** One invariant as a trial observed it. */
export interface InvariantResult {
  readonly name: string;
  readonly held: boolean;
  /** For a held invariant: what was checked; for a violated one: the first counterexample. */
  readonly detail: string;
}

/** One trial's outcome. */
export interface TrialReport {
  readonly trial: string;
  /** The faults injected, as a reader of the table should understand them. */
  readonly faults: string;
  /** How many runs the trial started (retries included). */
  readonly runs: number;
  readonly invariants: readonly InvariantResult[];
  readonly seconds: number;
}

/** A trial: sets up its parts, injects its faults, checks its invariants, tears everything down. */
export interface Trial {
  readonly name: string;
  run(): Promise<Omit<TrialReport, 'seconds'>>;
}

/** An invariant from a list of counterexamples: held when there are none. */
export function invariant(name: string, counterexamples: readonly string[], whenHeld: string): InvariantResult {
  return counterexamples.length === 0
    ? { name, held: true, detail: whenHeld }
    : { name, held: false, detail: `${counterexamples.length} violation(s): ${counterexamples.slice(0, 3).join('; ')}` };
}

/** Whether every invariant of every trial held. */
export function allHeld(reports: readonly TrialReport[]): boolean {
  return reports.every((report) => report.invariants.length > 0 && report.invariants.every((i) => i.held));
}

const clip = (text: string, width: number): string => (text.length <= width ? text : `${text.slice(0, width - 1)}…`);

/** The plain-text table: a trial's first row carries its name, faults, runs and time; each row one invariant. */
export function formatTable(reports: readonly TrialReport[], detailWidth = 110): string {
  const header = ['trial', 'faults', 'runs', 'time', 'invariant', 'result', 'detail'];
  const rows: string[][] = [];
  for (const report of reports) {
    report.invariants.forEach((inv, index) => {
      const first = index === 0;
      rows.push([
        first ? report.trial : '',
        first ? report.faults : '',
        first ? String(report.runs) : '',
        first ? `${report.seconds.toFixed(0)} s` : '',
        inv.name,
        inv.held ? 'held' : 'VIOLATED',
        clip(inv.detail.replace(/\s+/g, ' '), detailWidth),
      ]);
    });
  }
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join(' | ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}
