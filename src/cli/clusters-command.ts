/**
 * `generate-gitops-env clusters`: the fleet of a repository, and which clusters
 * are behind the reference; with `--cluster`, one cluster and its SealedSecrets
 * (with `--cert`, which are sealed with an older certificate).
 */
import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import type { ClusterView } from '../fleet/cluster-view.js';
import { ValidationError } from '../errors.js';
import { existingDirectory } from './cli-io.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

const OUTPUTS = ['table', 'json', 'yaml', 'resourceset'] as const;

/** A fixed-width table, one cluster a line. */
function table(views: readonly ClusterView[]): string {
  const rows = [
    ['NAME', 'KIND', 'STATUS', 'DOMAIN', 'REGION', 'ROLE', 'PROVIDERS', 'RENDERED FROM'],
    ...views.map((v) => [
      v.name,
      v.kind,
      v.status,
      v.domain ?? '',
      v.region ?? '',
      v.role ?? '',
      [v.infra_provider, v.dns_provider].filter((p) => p !== undefined).join(','),
      v.provenance?.platform_commit.slice(0, 12) ?? '',
    ]),
  ];
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

/** Registers `clusters --repo DIR [--cluster NAME [--cert FILE]] [-o table|json|yaml|resourceset]`. */
export function registerClustersCommand(cli: Command): void {
  cli
    .command('clusters')
    .description('List every cluster under clusters/ with its provenance, attributes and whether it is behind the reference.')
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .option('--reference <name>', 'the reference environment', REFERENCE_ENVIRONMENT)
    .option('--cluster <name>', 'show this cluster only, with its SealedSecrets')
    .option(
      '--cert <pem-file>',
      "with --cluster: the certificate the cluster's Sealed Secrets controller serves now; names the SealedSecrets sealed with another one",
    )
    .addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUTS).default('table'))
    .action(async (opts: { repo: string; reference: string; cluster?: string; cert?: string; output: (typeof OUTPUTS)[number] }) => {
      if (opts.cert !== undefined && opts.cluster === undefined)
        throw new ValidationError([{ field: '--cert', message: 'needs --cluster NAME: a certificate belongs to one cluster' }]);
      const dir = await existingDirectory(opts.repo);
      if (opts.cluster !== undefined) {
        if (opts.output === 'resourceset') throw new ValidationError([{ field: '--output', message: 'resourceset lists the fleet: leave out --cluster' }]);
        const { printClusterSealing } = await import('./clusters-command-sealing.js');
        return printClusterSealing(dir, { ...opts, output: opts.output, cluster: opts.cluster });
      }
      // Loaded when the command runs: `--help` and `--version` load none of it.
      const [{ listWorkTreeClusters }, { clusterView }, { formatResourceSetInputs }] = await Promise.all([
        import('../workspace/list-work-tree-clusters.js'),
        import('../fleet/cluster-view.js'),
        import('./clusters-resourceset-output.js'),
      ]);
      const { clusters, platformCommit } = await listWorkTreeClusters(dir, opts.reference);
      const views = clusters.map((c) => clusterView(c, platformCommit));
      const behind = views.filter((v) => v.status === 'behind').length;
      process.stderr.write(
        `${views.filter((v) => v.kind === 'generated').length} generated cluster(s), ${behind} behind ${platformCommit === undefined ? 'an unknown platform commit (not a git repository?)' : `platform commit ${platformCommit.slice(0, 12)}`}\n`,
      );
      if (opts.output === 'json') process.stdout.write(`${JSON.stringify(views, null, 2)}\n`);
      else if (opts.output === 'yaml') process.stdout.write(stringify(views));
      else if (opts.output === 'resourceset') process.stdout.write(formatResourceSetInputs(views));
      else process.stdout.write(table(views));
    });
}
