/**
 * What a pass's pull/merge request says: pure text from the pass and its
 * summary, so reviewers see the cluster, the files and the verify result
 * without opening the diff. A pass is a scaffold's (`infrastructure`, `all`)
 * or an upgrade run's or a removal run's one commit.
 */
import type { DeliverPassRequest, PassSummary } from '../run/delivery.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';
import { actionOfPass, RUN_ACTION_DEFINITIONS } from '../model/run-action.js';

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

export function titleOf(request: Pick<DeliverPassRequest, 'cluster' | 'pass' | 'reference'>): string {
  const { cluster, pass } = request;
  return RUN_ACTION_DEFINITIONS[actionOfPass(pass)].requestTitle(pass, cluster.name, request.reference ?? REFERENCE_ENVIRONMENT);
}

/** A Markdown list of `files` under `title`, the first {@link MAX_FILES_LISTED} named. */
export function fileList(title: string, files: readonly string[]): string[] {
  if (files.length === 0) return [];
  const shown = files.slice(0, MAX_FILES_LISTED).map((file) => `- \`${file}\``);
  if (files.length > MAX_FILES_LISTED) shown.push(`- … and ${files.length - MAX_FILES_LISTED} more`);
  return [`### ${title} (${files.length})`, '', ...shown, ''];
}

/** What a rendered pass wrote and removed, and what verify said. */
function renderedLines(summary: PassSummary): string[] {
  return [...fileList('Files written', summary.written), ...fileList('Files removed', summary.removed), `**Verify:** ${summary.verify}`];
}

export function bodyOf(request: Pick<DeliverPassRequest, 'cluster' | 'pass' | 'runId' | 'summary' | 'branch' | 'reference'>): string {
  const { cluster, pass, summary } = request;
  if (pass === 'upgrade' || pass === 'remove') return fleetChangeBody(request);
  const where = [cluster.domain, cluster.region].filter((part) => part !== undefined && part !== '');
  const why =
    pass === 'infrastructure'
      ? "The layers that bring up the cluster's Sealed Secrets controller; nothing is sealed yet. The run waits for this request to be merged: the second pass needs the controller's certificate, and the cluster's Flux reads only `" +
        request.branch +
        '`.'
      : "Every layer, with credentials sealed by the cluster's own Sealed Secrets key.";
  return [
    `Cluster **${cluster.name}**${where.length > 0 ? ` (${where.join(', ')})` : ''}, pass \`${pass}\`.`,
    '',
    why,
    '',
    ...renderedLines(summary),
    '',
    `Run \`${request.runId}\`, opened by gitops-scaffolder.`,
  ].join('\n');
}

/** An upgrade run's or a removal run's request: what its one commit does to the cluster's directory. */
function fleetChangeBody(request: Pick<DeliverPassRequest, 'cluster' | 'pass' | 'runId' | 'summary' | 'branch' | 'reference'>): string {
  const { cluster, summary } = request;
  const what =
    request.pass === 'upgrade'
      ? [
          `Re-renders **${cluster.name}** from the reference environment \`${request.reference ?? REFERENCE_ENVIRONMENT}\` with its recorded identity and attributes; every sealed credential is kept byte for byte.`,
          '',
          ...renderedLines(summary),
        ]
      : [
          `Decommissions **${cluster.name}**: deletes the files gitops-scaffolder generated under \`clusters/${cluster.name}/\`. Once merged into \`${request.branch}\`, the cluster's Flux prunes what they deployed.`,
          '',
          ...fileList('Files removed', summary.removed),
          ...fileList('Files kept (not written by gitops-scaffolder)', summary.kept ?? []),
        ];
  return [...what, '', `Run \`${request.runId}\`, opened by gitops-scaffolder.`].join('\n');
}
