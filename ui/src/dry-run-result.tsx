/**
 * A dry run's answer: the files the scaffold would write as a tree with change
 * marks, the diff of the selected file, and the button that starts the run.
 */
import type { RefObject } from 'preact';
import { useState } from 'preact/hooks';
import type { DryRunResult } from './api';
import { messageOf } from './components';
import { DiffView } from './diff-view';
import { FileTree } from './file-tree';

interface Props {
  readonly preview: DryRunResult;
  readonly selected: string | null;
  readonly onSelect: (path: string) => void;
  readonly headingRef: RefObject<HTMLHeadingElement | null>;
  readonly starting: boolean;
  readonly startError: unknown;
  readonly onStart: () => void;
}

export function DryRunResultCard({ preview, selected, onSelect, headingRef, starting, startError, onStart }: Props) {
  const [onlyChanged, setOnlyChanged] = useState(false);
  const files = onlyChanged ? preview.files.filter((f) => f.change !== 'unchanged') : preview.files;
  const chosen = preview.files.find((f) => f.path === selected) ?? null;
  const counts = { added: 0, modified: 0, removed: 0, unchanged: 0 };
  for (const file of preview.files) counts[file.change]++;
  return (
    <section class="card dry-run-result" aria-labelledby="result-heading">
      <div class="section-head">
        <h2 id="result-heading" tabIndex={-1} ref={headingRef}>
          {preview.files.length} files under <code>{preview.gitops_path}</code>
        </h2>
        <div class="actions">
          <button type="button" class="primary" onClick={onStart} disabled={starting}>
            {starting ? 'Starting…' : 'Start this scaffold'}
          </button>
        </div>
      </div>
      <p class="muted" role="status">
        {counts.added} added, {counts.modified} modified, {counts.removed} removed, {counts.unchanged} unchanged · {preview.repository.url} branch{' '}
        {preview.repository.branch}, reference <code>clusters/{preview.reference}</code>
      </p>
      {startError !== null && (
        <p class="error-box" role="alert">
          Could not start the scaffold: {messageOf(startError)}
        </p>
      )}
      <div class="field checkbox">
        <input
          id="only-changed"
          type="checkbox"
          checked={onlyChanged}
          onChange={(event) => setOnlyChanged((event.currentTarget as HTMLInputElement).checked)}
        />
        <label for="only-changed">Only files that change</label>
      </div>
      <div class="dry-run-panes">
        <nav class="tree-pane" aria-label="Files">
          {files.length === 0 ? (
            <p class="muted">No file changes.</p>
          ) : (
            <FileTree files={files} root={preview.gitops_path} selected={selected} onSelect={onSelect} />
          )}
        </nav>
        <div class="diff-pane">{chosen === null ? <p class="muted">Choose a file to see its diff.</p> : <DiffView file={chosen} />}</div>
      </div>
    </section>
  );
}
