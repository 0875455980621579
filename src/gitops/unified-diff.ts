/**
 * A file change as `diff -u` / `git diff` print it, for `render --dry-run`:
 * `--- a/path`, `+++ b/path` (or /dev/null for an added or removed file), then
 * hunks with three lines of context.
 */
import { diffLines, hunksOf } from './line-diff.js';

const MARK = { context: ' ', add: '+', remove: '-' } as const;

/**
 * The unified diff from `before` to `after` of `path`; undefined content is a
 * file that does not exist on that side. Empty when nothing changes.
 */
export function unifiedDiff(path: string, before: string | undefined, after: string | undefined): string {
  const hunks = hunksOf(diffLines(before ?? '', after ?? ''));
  if (hunks.length === 0 && before !== undefined && after !== undefined) return '';
  const out = [`--- ${before === undefined ? '/dev/null' : `a/${path}`}`, `+++ ${after === undefined ? '/dev/null' : `b/${path}`}`];
  for (const hunk of hunks) {
    out.push(`@@ -${hunk.oldStart},${hunk.oldCount} +${hunk.newStart},${hunk.newCount} @@`);
    for (const line of hunk.lines) out.push(`${MARK[line.op]}${line.text}`);
  }
  return `${out.join('\n')}\n`;
}
