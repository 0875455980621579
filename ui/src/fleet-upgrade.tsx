/**
 * The fleet-wide upgrade on the Fleet page: the operator selects behind
 * clusters (or all of them) in the table, chooses a wave size, previews what
 * each would change — per cluster, its files in the dry run's tree and diff
 * viewer — confirms through the confirmation every irreversible action uses,
 * and goes to the rollout's page. One `POST /api/v1/upgrades` with
 * `dry_run` and `diff`, then one without: only the clusters the preview found
 * changed are upgraded, in waves of the chosen size, pushed.
 */
import { useEffect, useState } from 'preact/hooks';
import { messageOf, SrOnly } from './components';
import { ConfirmedAction } from './confirmed-action';
import { DiffView } from './diff-view';
import { FileTree } from './file-tree';
import { previewFleetUpgrade, startFleetUpgrade, type UpgradePreview } from './fleet-api';
import { useAction } from './hooks';
import { navigate, paths } from './router';

/** The waves a rollout of `names` in waves of `size` runs, as the service cuts them: sorted by name. */
export function wavesOf(names: readonly string[], size: number): string[][] {
  const sorted = [...names].sort();
  const waves: string[][] = [];
  for (let i = 0; i < sorted.length; i += Math.max(1, size)) waves.push(sorted.slice(i, i + Math.max(1, size)));
  return waves;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

interface Props {
  /** The behind clusters of the fleet, by name. */
  readonly behind: readonly string[];
  readonly selected: ReadonlySet<string>;
  readonly onSelect: (names: ReadonlySet<string>) => void;
}

export function FleetUpgradePanel({ behind, selected, onSelect }: Props) {
  const [waveSize, setWaveSize] = useState(1);
  const [preview, setPreview] = useState<UpgradePreview | null>(null);
  const { busy, error, run } = useAction();
  const chosen = behind.filter((name) => selected.has(name));
  const key = chosen.join(',');
  // A preview belongs to the selection it was made for.
  useEffect(() => setPreview(null), [key]);

  if (behind.length === 0) return null;
  return (
    <section class="card fleet-upgrade" aria-labelledby="fleet-upgrade-heading" data-testid="fleet-upgrade">
      <h2 id="fleet-upgrade-heading">Upgrade behind clusters</h2>
      <p class="muted">
        {plural(behind.length, 'cluster')} behind the reference; {chosen.length} selected in the table.
      </p>
      <div class="toolbar">
        <button type="button" class="secondary" onClick={() => onSelect(new Set(behind))} disabled={chosen.length === behind.length}>
          Select all behind
        </button>
        <button type="button" class="secondary" onClick={() => onSelect(new Set())} disabled={chosen.length === 0}>
          Clear the selection
        </button>
        <div class="field inline">
          <label for="wave-size">Wave size</label>
          <input
            id="wave-size"
            type="number"
            min={1}
            max={Math.max(1, chosen.length)}
            value={waveSize}
            aria-describedby="wave-size-hint"
            onInput={(event) => {
              const value = Number((event.currentTarget as HTMLInputElement).value);
              if (Number.isInteger(value) && value >= 1) setWaveSize(value);
            }}
          />
        </div>
        <button
          type="button"
          class="primary"
          disabled={chosen.length === 0 || busy}
          onClick={() => void run(async () => setPreview(await previewFleetUpgrade(chosen)))}
        >
          {busy ? 'Rendering…' : `Preview the upgrade of ${plural(chosen.length, 'cluster')}`}
        </button>
      </div>
      <p class="muted" id="wave-size-hint">
        Clusters per wave: the next wave starts only when every upgrade of the previous one succeeded; a failure stops the rollout.
      </p>
      {error !== null && (
        <p class="error-box" role="alert">
          The preview failed: {messageOf(error)}
        </p>
      )}
      {preview !== null && <UpgradePreviewView preview={preview} waveSize={waveSize} />}
    </section>
  );
}

function UpgradePreviewView({ preview, waveSize }: { preview: UpgradePreview; waveSize: number }) {
  const changed = preview.clusters.filter((c) => c.status === 'changed');
  const upToDate = preview.clusters.filter((c) => c.status === 'up_to_date');
  const failed = preview.clusters.filter((c) => c.status === 'failed');
  const [shown, setShown] = useState<string | null>(changed[0]?.name ?? null);
  const cluster = preview.clusters.find((c) => c.name === shown);
  const waves = wavesOf(
    changed.map((c) => c.name),
    waveSize,
  );
  return (
    <div class="upgrade-preview" data-testid="fleet-upgrade-preview">
      <p role="status">
        {plural(changed.length, 'cluster')} would change, {upToDate.length} already up to date, {failed.length} would fail.
        {upToDate.length + failed.length > 0 && ' Only the clusters that would change are upgraded.'}
      </p>
      {failed.length > 0 && (
        <ul class="error-list">
          {failed.map((c) => (
            <li key={c.name} data-cluster={c.name}>
              <strong>{c.name}</strong>: {c.message ?? 'no reason given'}
            </li>
          ))}
        </ul>
      )}
      {changed.length > 0 && (
        <>
          <div class="cluster-choice" role="group" aria-label="The cluster whose diff is shown">
            {changed.map((c) => (
              <button
                key={c.name}
                type="button"
                class={c.name === shown ? 'secondary chosen' : 'secondary'}
                aria-pressed={c.name === shown}
                data-cluster={c.name}
                onClick={() => setShown(c.name)}
              >
                {c.name}{' '}
                <span class="muted" aria-hidden="true">
                  +{c.files?.added.length ?? 0} ~{c.files?.modified.length ?? 0} −{c.files?.removed.length ?? 0}
                </span>
                <SrOnly>
                  : {c.files?.added.length ?? 0} added, {c.files?.modified.length ?? 0} modified, {c.files?.removed.length ?? 0} removed
                </SrOnly>
              </button>
            ))}
          </div>
          {cluster !== undefined && <UpgradeDiff key={cluster.name} cluster={cluster} />}
          <ConfirmedAction
            id="fleet-upgrade-question"
            testId="fleet-upgrade-confirm"
            tone="primary"
            label={`Upgrade ${plural(changed.length, 'cluster')}…`}
            question={`Upgrade ${plural(changed.length, 'cluster')} in ${plural(waves.length, 'wave')} of at most ${waveSize}?`}
            yes="Yes, start the rollout"
            busy="Starting…"
            keep="Not now"
            failure="Could not start the rollout"
            details={
              <>
                <p>
                  Each cluster is upgraded by its own run: re-rendered from the current reference, its sealed credentials kept byte for byte, verified, and
                  pushed straight to the branch as one commit touching only its own directory. A wave starts only when every run of the previous one succeeded.
                </p>
                <ol class="wave-list" data-testid="fleet-upgrade-waves">
                  {waves.map((wave, index) => (
                    <li key={index}>
                      Wave {index + 1}: {wave.join(', ')}
                    </li>
                  ))}
                </ol>
              </>
            }
            act={async () =>
              navigate(
                paths.upgrade(
                  (
                    await startFleetUpgrade(
                      changed.map((c) => c.name),
                      waveSize,
                    )
                  ).id,
                ),
              )
            }
          />
        </>
      )}
    </div>
  );
}

/** One changed cluster's files in the dry run's tree, and the selected one's diff (the first at the start). */
export function UpgradeDiff({ cluster }: { cluster: UpgradePreview['clusters'][number] }) {
  const [file, setFile] = useState<string | null>(null);
  const files = cluster.diff ?? [];
  const selectedFile = files.find((f) => f.path === file) ?? files[0] ?? null;
  return (
    <div class="dry-run-panes upgrade-diff" data-testid="upgrade-diff" data-cluster={cluster.name}>
      <nav class="tree-pane" aria-label={`Files of ${cluster.name}`}>
        {files.length === 0 ? (
          <p class="muted">The service sent no file contents.</p>
        ) : (
          <FileTree files={files} root={`clusters/${cluster.name}`} selected={selectedFile?.path ?? null} onSelect={setFile} />
        )}
      </nav>
      <div class="diff-pane">{selectedFile === null ? <p class="muted">No file to show.</p> : <DiffView file={selectedFile} subject="upgrade" />}</div>
    </div>
  );
}
