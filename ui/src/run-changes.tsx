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
      <KeptFiles files={shown.kept} testId="kept-files" lead="Kept: not the generator's files, so the removal left them." />
    </section>
  );
}

/** The files a removal leaves under the cluster's directory (flux bootstrap's among them), after `lead`; nothing when there are none. */
export function KeptFiles({ files, lead, testId }: { files: readonly string[]; lead: string; testId: string }) {
  if (files.length === 0) return null;
  return (
    <div data-testid={testId}>
      <p>{lead}</p>
      <ul class="kept-files">
        {files.map((file) => (
          <li key={file}>
            <code class="wrap">{file}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}
