/** A unified diff of one dry-run file against what the repository holds now. */
import { useMemo } from 'preact/hooks';
import type { DryRunFile } from './api';
import { ChangeBadge } from './components';
import { diffLines, diffStats, hunksOf, linesOf, type DiffLine } from '../../src/gitops/line-diff.js';

/** `subject` names what would change the file, in the notes ("The upgrade would delete this file."). */
export function DiffView({ file, subject = 'scaffold' }: { file: DryRunFile; subject?: string }) {
  const view = useMemo(() => diffOf(file, subject), [file, subject]);
  return (
    <section class="diff-view" aria-labelledby="diff-heading">
      <div class="section-head">
        <h3 id="diff-heading">
          <ChangeBadge change={file.change} /> <code class="wrap">{file.path}</code>
        </h3>
        {view.lines !== undefined && !view.plain && (
          <p class="diff-stats">
            <span class="added">+{view.stats.added}</span> <span class="removed">−{view.stats.removed}</span>
            <span class="sr-only">
              {' '}
              ({view.stats.added} lines added, {view.stats.removed} removed)
            </span>
          </p>
        )}
      </div>
      {view.note !== undefined && <p class="notice">{view.note}</p>}
      {view.lines !== undefined &&
        view.lines.length > 0 &&
        (view.plain ? (
          <ContentTable path={file.path} lines={view.lines} />
        ) : (
          <DiffTable path={file.path} lines={view.lines} context={file.change === 'modified' ? 3 : Number.POSITIVE_INFINITY} />
        ))}
    </section>
  );
}

interface DiffModel {
  readonly lines?: readonly DiffLine[];
  readonly stats: { added: number; removed: number };
  readonly note?: string;
  /** Content only, not a diff (the old side is unknown). */
  readonly plain?: boolean;
}

function diffOf(file: DryRunFile, subject: string): DiffModel {
  const none = { added: 0, removed: 0 };
  switch (file.change) {
    case 'added': {
      const lines = diffLines('', file.content ?? '');
      return { lines, stats: diffStats(lines), note: 'A new file: the repository has nothing at this path.' };
    }
    case 'modified': {
      if (file.previous_content === undefined) {
        const lines = linesOf(file.content ?? '').map((text, index) => ({ op: 'context' as const, text, newLine: index + 1 }));
        return {
          lines,
          stats: none,
          plain: true,
          note: "The service did not send the repository's current content of this file, so only its new content is shown.",
        };
      }
      const lines = diffLines(file.previous_content, file.content ?? '');
      return { lines, stats: diffStats(lines) };
    }
    case 'removed': {
      if (file.previous_content === undefined) return { stats: none, note: `The ${subject} would delete this file.` };
      const lines = diffLines(file.previous_content, '');
      return { lines, stats: diffStats(lines), note: `The ${subject} would delete this file.` };
    }
    case 'unchanged':
      return { stats: none, note: 'No change: the repository already holds exactly this content.' };
  }
}

function DiffTable({ path, lines, context }: { path: string; lines: readonly DiffLine[]; context: number }) {
  const hunks = useMemo(() => {
    if (!Number.isFinite(context)) {
      const olds = lines.filter((l) => l.op !== 'add').length;
      const news = lines.filter((l) => l.op !== 'remove').length;
      return [{ oldStart: olds === 0 ? 0 : 1, oldCount: olds, newStart: news === 0 ? 0 : 1, newCount: news, lines }];
    }
    return hunksOf(lines, context);
  }, [lines, context]);
  if (hunks.length === 0) return <p class="muted">No line differs.</p>;
  return (
    <div class="diff-wrap" tabIndex={0} role="region" aria-label={`Diff of ${path}`}>
      <table class="diff">
        <caption class="sr-only">Unified diff of {path}: old line number, new line number, change, text</caption>
        <thead class="sr-only">
          <tr>
            <th scope="col">Old line</th>
            <th scope="col">New line</th>
            <th scope="col">Change</th>
            <th scope="col">Text</th>
          </tr>
        </thead>
        {hunks.map((hunk) => (
          <tbody key={`${hunk.oldStart}-${hunk.newStart}`}>
            <tr class="hunk">
              <td colSpan={4}>
                @@ -{hunk.oldStart},{hunk.oldCount} +{hunk.newStart},{hunk.newCount} @@
              </td>
            </tr>
            {hunk.lines.map((line, index) => (
              <tr key={index} class={`diff-${line.op}`}>
                <td class="ln">{line.oldLine ?? ''}</td>
                <td class="ln">{line.newLine ?? ''}</td>
                <td class="sign">
                  <span aria-hidden="true">{line.op === 'add' ? '+' : line.op === 'remove' ? '−' : ' '}</span>
                  <span class="sr-only">{line.op === 'add' ? 'added' : line.op === 'remove' ? 'removed' : 'unchanged'}</span>
                </td>
                <td class="text">{line.text === '' ? '\u00a0' : line.text}</td>
              </tr>
            ))}
          </tbody>
        ))}
      </table>
    </div>
  );
}

/** A file's content with line numbers, for a modified file whose old content is unknown. */
function ContentTable({ path, lines }: { path: string; lines: readonly DiffLine[] }) {
  return (
    <div class="diff-wrap" tabIndex={0} role="region" aria-label={`New content of ${path}`}>
      <table class="diff">
        <caption class="sr-only">New content of {path}: line number, text</caption>
        <tbody>
          {lines.map((line, index) => (
            <tr key={index} class="diff-context">
              <td class="ln">{line.newLine ?? index + 1}</td>
              <td class="text">{line.text === '' ? '\u00a0' : line.text}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
