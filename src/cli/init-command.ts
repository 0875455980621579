/**
 * `generate-gitops-env init DIR`: a new platform repository seeded with one of
 * the shipped reference platforms, committed.
 */
import { readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { ValidationError } from '../errors.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { say } from './cli-io.js';

/** The platforms shipped under platform/, each a directory `init --platform` can seed. */
function shippedPlatforms(): string[] {
  const root = dirname(platformDir());
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^[a-z0-9][-a-z0-9]*$/.test(entry.name))
    .map((entry) => entry.name)
    .sort((a, b) => (a === 'default' ? -1 : b === 'default' ? 1 : a.localeCompare(b)));
}

/** Adds `init` to `program`. */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('Make DIR a new Git repository holding the reference platform, committed.')
    .argument('<dir>', 'directory to create (must be missing or empty)')
    .option('--platform <name>', `which shipped platform to seed: ${shippedPlatforms().join(', ')}`, 'default')
    .action(async (dir: string, opts: { platform: string }) => {
      const target = resolve(dir);
      const known = shippedPlatforms();
      if (!known.includes(opts.platform)) {
        throw new ValidationError([{ field: '--platform', message: `${JSON.stringify(opts.platform)} is not a shipped platform: one of ${known.join(', ')}` }]);
      }
      const sha = await initPlatformRepository(target, platformDir(opts.platform));
      say(`Initialized ${target} with the ${opts.platform} reference platform (commit ${sha.slice(0, 12)}).`);
      say(
        `Next: generate-gitops-env render --repo ${dir} --cluster NAME --domain DOMAIN --region REGION${opts.platform === 'default' ? '' : ' [--role ROLE --infra-provider PROVIDER --dns-provider PROVIDER]'}`,
      );
      process.stdout.write(`${sha}\n`);
    });
}
