/** `generate-gitops-env upgrade`: re-render generated clusters from the current reference, credentials kept. */
import type { Command } from 'commander';
import type { UpgradeOutcome, upgradeWorkTree as UpgradeWorkTree } from '../workspace/upgrade-work-tree.js';
import { EXIT_FAILURE, EXIT_OK } from '../exit-codes.js';
import { packageVersion } from '../package-paths.js';
import { existingDirectory } from './cli-io.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

/** Loaded when the command runs: `--help` and `--version` load none of it. */
const upgradeWorkTree: typeof UpgradeWorkTree = async (...args) => (await import('../workspace/upgrade-work-tree.js')).upgradeWorkTree(...args);

const say = (line: string) => process.stderr.write(`${line}\n`);

/** One cluster's lines: a summary, then each changed file prefixed like `git status --short`. */
function describe(outcome: UpgradeOutcome, dryRun: boolean): string {
  const counts = `${outcome.added.length} added, ${outcome.modified.length} modified, ${outcome.removed.length} removed`;
  const head =
    outcome.status === 'failed'
      ? `${outcome.name}: failed: ${outcome.message ?? 'unknown error'}`
      : outcome.status === 'up_to_date'
        ? `${outcome.name}: up to date`
        : `${outcome.name}: ${dryRun ? 'would change' : 'upgraded'}: ${counts} (${outcome.credentialsKept} sealed credential(s) kept)`;
  const files = [...outcome.added.map((p) => `  A ${p}`), ...outcome.modified.map((p) => `  M ${p}`), ...outcome.removed.map((p) => `  D ${p}`)];
  const findings = (outcome.findings ?? []).map((f) => `  ! ${f}`);
  return [head, ...files, ...findings].join('\n') + '\n';
}

/** Registers `upgrade --repo DIR [--cluster NAME ...] [--dry-run]`. */
export function registerUpgradeCommand(cli: Command): void {
  cli
    .command('upgrade')
    .description('Re-render generated clusters from the current reference with their recorded identity and attributes; sealed credentials are kept.')
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .option('--cluster <name...>', 'only these clusters (default: every generated cluster)')
    .option('--reference <name>', 'the reference environment', REFERENCE_ENVIRONMENT)
    .option('--dry-run', 'write nothing; print what each cluster would change', false)
    .action(async (opts: { repo: string; cluster?: string[]; reference: string; dryRun: boolean }) => {
      const dir = await existingDirectory(opts.repo);
      const started = Date.now();
      const outcomes = await upgradeWorkTree(dir, {
        reference: opts.reference,
        dryRun: opts.dryRun,
        generatorVersion: packageVersion(),
        ...(opts.cluster !== undefined ? { clusters: opts.cluster } : {}),
      });
      for (const outcome of outcomes) process.stdout.write(describe(outcome, opts.dryRun));
      const count = (status: UpgradeOutcome['status']) => outcomes.filter((o) => o.status === status).length;
      const seconds = (Date.now() - started) / 1000;
      say(
        `==> ${outcomes.length} cluster(s): ${count('changed')} ${opts.dryRun ? 'would change' : 'upgraded'}, ${count('up_to_date')} up to date, ${count('failed')} failed ` +
          `(${seconds.toFixed(1)} s, ${(outcomes.length / Math.max(seconds, 0.001)).toFixed(1)} clusters/s)`,
      );
      if (!opts.dryRun && count('changed') > 0) say('Next: review with git diff, then commit (one commit per cluster: git add clusters/NAME && git commit).');
      process.exitCode = count('failed') > 0 ? EXIT_FAILURE : EXIT_OK;
    });
}
