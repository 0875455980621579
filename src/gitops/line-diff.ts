/**
 * A line diff small enough to run in the dashboard and the CLI (it is shared:
 * ui/ imports it, and `render --dry-run` prints it): common prefix and suffix
 * trimmed, then a longest-common-subsequence table over what is left, then
 * unified hunks with context. Generated manifests are at most a few hundred
 * lines; beyond MAX_CELLS the middle is shown as removed-then-added instead.
 */

export type DiffOp = 'context' | 'add' | 'remove';

export interface DiffLine {
  readonly op: DiffOp;
  readonly text: string;
  /** 1-based line number in the old text (context and remove). */
  readonly oldLine?: number;
  /** 1-based line number in the new text (context and add). */
  readonly newLine?: number;
}

export interface DiffHunk {
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newStart: number;
  readonly newCount: number;
  readonly lines: readonly DiffLine[];
}

const MAX_CELLS = 4_000_000;

/** Splits text into lines; a final newline does not make an empty last line. */
export function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Every line of both texts, in order, as context, additions and removals. */
export function diffLines(oldText: string, newText: string): DiffLine[] {
  const a = linesOf(oldText);
  const b = linesOf(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = [];
  for (let i = 0; i < start; i++) out.push({ op: 'context', text: a[i] as string, oldLine: i + 1, newLine: i + 1 });

  const n = endA - start;
  const m = endB - start;
  if (n * m > MAX_CELLS) {
    for (let i = start; i < endA; i++) out.push({ op: 'remove', text: a[i] as string, oldLine: i + 1 });
    for (let j = start; j < endB; j++) out.push({ op: 'add', text: b[j] as string, newLine: j + 1 });
  } else {
    // lcs[i][j]: length of the LCS of a[start+i..endA) and b[start+j..endB), in one flat array.
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          a[start + i] === b[start + j]
            ? (lcs[(i + 1) * width + j + 1] as number) + 1
            : Math.max(lcs[(i + 1) * width + j] as number, lcs[i * width + j + 1] as number);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) {
        out.push({ op: 'context', text: a[start + i] as string, oldLine: start + i + 1, newLine: start + j + 1 });
        i++;
        j++;
      } else if (j < m && (i >= n || (lcs[i * width + j + 1] as number) >= (lcs[(i + 1) * width + j] as number))) {
        out.push({ op: 'add', text: b[start + j] as string, newLine: start + j + 1 });
        j++;
      } else {
        out.push({ op: 'remove', text: a[start + i] as string, oldLine: start + i + 1 });
        i++;
      }
    }
  }
  for (let k = 0; endA + k < a.length; k++) out.push({ op: 'context', text: a[endA + k] as string, oldLine: endA + k + 1, newLine: endB + k + 1 });
  return normalizeOrder(out);
}

/** Within each run of changes, removals before additions, as unified diffs show them. */
function normalizeOrder(lines: DiffLine[]): DiffLine[] {
  const out: DiffLine[] = [];
  let removes: DiffLine[] = [];
  let adds: DiffLine[] = [];
  const flush = () => {
    out.push(...removes, ...adds);
    removes = [];
    adds = [];
  };
  for (const line of lines) {
    if (line.op === 'remove') removes.push(line);
    else if (line.op === 'add') adds.push(line);
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  return out;
}

/** Groups a diff into hunks with `context` unchanged lines around each change. No changes: no hunks. */
export function hunksOf(lines: readonly DiffLine[], context = 3): DiffHunk[] {
  const changed = lines.map((l, index) => (l.op === 'context' ? -1 : index)).filter((index) => index >= 0);
  if (changed.length === 0) return [];
  const ranges: [number, number][] = [];
  for (const index of changed) {
    const from = Math.max(0, index - context);
    const to = Math.min(lines.length - 1, index + context);
    const last = ranges.at(-1);
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else ranges.push([from, to]);
  }
  return ranges.map(([from, to]) => {
    const slice = lines.slice(from, to + 1);
    const olds = slice.filter((l) => l.op !== 'add');
    const news = slice.filter((l) => l.op !== 'remove');
    // For an empty side, unified diffs name the line before the hunk.
    const oldStart = olds[0]?.oldLine ?? previousLine(lines, from, 'oldLine');
    const newStart = news[0]?.newLine ?? previousLine(lines, from, 'newLine');
    return { oldStart, oldCount: olds.length, newStart, newCount: news.length, lines: slice };
  });
}

function previousLine(lines: readonly DiffLine[], before: number, key: 'oldLine' | 'newLine'): number {
  for (let i = before - 1; i >= 0; i--) {
    const value = lines[i]?.[key];
    if (value !== undefined) return value;
  }
  return 0;
}

/** Counts of added and removed lines. */
export function diffStats(lines: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.op === 'add') added++;
    else if (line.op === 'remove') removed++;
  }
  return { added, removed };
}
