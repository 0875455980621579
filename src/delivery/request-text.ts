/**
 * What a pass's pull/merge request says: pure text from the pass and its
 * summary, so reviewers see the cluster, the files and the verify result
 * without opening the diff.
 */
import type { DeliverPassRequest } from './delivery.js';

/** How many file names the description lists before summing up the rest. */
const MAX_FILES_LISTED = 50;

/** The branch a pass is reviewed on: `scaffold/<cluster>/<pass>`. */
export function reviewBranchOf(cluster: string, pass: string): string {
  return `scaffold/${cluster}/${pass}`;
}

/** The labels every scaffold request carries. */
export function labelsOf(pass: string): string[] {
  return ['gitops-scaffolder', `scaffold-pass:${pass}`];
}

export function titleOf(request: Pick<DeliverPassRequest, 'cluster' | 'pass'>): string {
  return request.pass === 'infrastructure'
    ? `Scaffold ${request.cluster.name}: infrastructure layer (pass 1 of 2)`
    : `Scaffold ${request.cluster.name}: all layers, credentials sealed (pass 2 of 2)`;
}

/** A Markdown list of `files` under `title`, the first {@link MAX_FILES_LISTED} named. */
export function fileList(title: string, files: readonly string[]): string[] {
  if (files.length === 0) return [];
  const shown = files.slice(0, MAX_FILES_LISTED).map((file) => `- \`${file}\``);
  if (files.length > MAX_FILES_LISTED) shown.push(`- … and ${files.length - MAX_FILES_LISTED} more`);
  return [`### ${title} (${files.length})`, '', ...shown, ''];
}

export function bodyOf(request: Pick<DeliverPassRequest, 'cluster' | 'pass' | 'runId' | 'summary' | 'branch'>): string {
  const { cluster, pass, summary } = request;
  const why =
    pass === 'infrastructure'
      ? "The layers that bring up the cluster's Sealed Secrets controller; nothing is sealed yet. The run waits for this request to be merged: the second pass needs the controller's certificate, and the cluster's Flux reads only `" +
        request.branch +
        '`.'
      : "Every layer, with credentials sealed by the cluster's own Sealed Secrets key.";
  return [
    `Cluster **${cluster.name}** (${cluster.domain}, ${cluster.region}), pass \`${pass}\`.`,
    '',
    why,
    '',
    ...fileList('Files written', summary.written),
    ...fileList('Files removed', summary.removed),
    `**Verify:** ${summary.verify}`,
    '',
    `Run \`${request.runId}\`, opened by gitops-scaffolder.`,
  ].join('\n');
}
