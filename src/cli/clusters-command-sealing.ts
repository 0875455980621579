/**
 * `generate-gitops-env clusters --cluster NAME [--cert FILE]`: one cluster's
 * detail with its SealedSecrets, compared offline with the certificate its
 * controller serves now (`kubeseal --fetch-cert`), naming the ones sealed with
 * another certificate: what `rotate` would reseal.
 */
import { stringify } from 'yaml';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { NotFoundError } from '../errors.js';
import { clusterView } from '../fleet/cluster-view.js';
import { readClusterSealedSecrets, sealingView, type SealedSecretView, type SealingView } from '../fleet/sealing-freshness.js';
import { readInputFile } from '../read-input-file.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { listWorkTreeClusters } from '../workspace/list-work-tree-clusters.js';

/** What the command was given. */
export interface ClusterSealingFlags {
  readonly repo: string;
  readonly reference: string;
  readonly cluster: string;
  readonly cert?: string;
  readonly output: 'table' | 'json' | 'yaml';
}

/** One SealedSecret a line: state, namespace/name, recorded fingerprint, file. */
function table(sealing: SealingView): string {
  const row = (state: string, s: SealedSecretView) => [state, `${s.namespace}/${s.name}`, s.sealed_with ?? '-', s.path];
  const rows = [
    ['STATE', 'SEALEDSECRET', 'SEALED WITH', 'PATH'],
    ...sealing.stale.map((s) => row('stale', s)),
    ...sealing.unknown.map((s) => row('unknown', s)),
  ];
  if (rows.length === 1) return '';
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** The summary for stderr: what was compared and what to do about it. */
function summary(name: string, repo: string, cert: string | undefined, sealing: SealingView): string {
  const lines = [`${name}: ${sealing.sealed_secrets} SealedSecret(s)`];
  if (sealing.controller_certificate === null) {
    lines.push(`  ${sealing.unknown.length} record(s) no certificate; ${sealing.reason ?? ''}`);
  } else {
    lines.push(
      `  compared with ${sealing.controller_certificate.fingerprint} (valid until ${sealing.controller_certificate.not_after}): ${sealing.stale.length} sealed with another certificate, ${sealing.unknown.length} recording none, ${sealing.current_count ?? 0} current`,
    );
    if (sealing.stale.length > 0)
      lines.push(
        `  reseal them: generate-gitops-env rotate --repo ${repo} --cluster ${name} --cert ${cert ?? 'FILE'} --recovery-private-key OLD-KEY.pem (same values; or --fresh-values)`,
      );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Prints one cluster with its `sealing` section.
 * @throws NotFoundError when `clusters/<cluster>/` does not exist
 * @throws ValidationError when --cert cannot be read or is not a usable certificate
 */
export async function printClusterSealing(dir: string, flags: ClusterSealingFlags): Promise<void> {
  const certificate = flags.cert === undefined ? undefined : parseSealingCertificate(await readInputFile(flags.cert, '--cert'), '--cert');
  const { clusters, platformCommit } = await listWorkTreeClusters(dir, flags.reference);
  const entry = clusters.find((c) => c.name === flags.cluster);
  if (entry === undefined) throw new NotFoundError(`clusters/${flags.cluster} does not exist in ${flags.repo}`);
  const sealing = sealingView(
    await readClusterSealedSecrets(new FsRepoReader(dir), entry.name),
    certificate,
    "no --cert given: pass the certificate the cluster's controller serves now (kubeseal --fetch-cert) to name the stale ones",
  );
  const view = { ...clusterView(entry, platformCommit), sealing };
  process.stderr.write(summary(entry.name, flags.repo, flags.cert, sealing));
  if (flags.output === 'json') process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
  else if (flags.output === 'yaml') process.stdout.write(stringify(view));
  else process.stdout.write(table(sealing));
}
