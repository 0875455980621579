/** An upgrade's or a removal's one commit, in files: how many it added, modified and removed, the sealed credentials an upgrade kept, and the files a removal left in place. */
import type { RunDetail } from './api';
import { ChangeBadge } from './components';
import { shownChanges } from './run-action-view';

export function RunChanges({ run }: { run: RunDetail }) {
  const shown = shownChanges(run);
  if (shown === undefined) return null;
  return (
    <section class="card" aria-labelledby="changes-heading" data-testid="run-changes">
      <h2 id="changes-heading">Changes</h2>
      {shown.files.length === 0 ? (
        <p class="muted">{shown.summary}</p>
      ) : (
        <>
          <ul class="change-counts" aria-label={`Files: ${shown.summary}`}>
            {shown.files.map(([change, count]) => (
              <li key={change} data-change-count={change}>
                <ChangeBadge change={change} /> {count} {change}
              </li>
            ))}
          </ul>
          {shown.credentialsKept !== undefined && <p data-testid="credentials-kept">{shown.credentialsKept}.</p>}
        </>
      )}
      {shown.kept.length > 0 && (
        <div data-testid="kept-files">
          <p>Kept: not the generator's files, so the removal left them.</p>
          <ul class="kept-files">
            {shown.kept.map((file) => (
              <li key={file}>
                <code class="wrap">{file}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
