/**
 * `generate-gitops-env publish`: the repository's HEAD as a Flux OCI artifact.
 */
import type { Command } from 'commander';
import { ValidationError } from '../errors.js';
import { existingDirectory, say } from './cli-io.js';

/** Adds `publish` to `program`. */
export function registerPublishCommand(program: Command): void {
  program
    .command('publish')
    .description("Push the repository's HEAD as a Flux OCI artifact, tagged with the commit SHA and latest.")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--to <oci-reference>', 'where to push, e.g. oci://registry.example.net/platform/gitops')
    .option('--tag <tag...>', 'tags to push instead of the commit SHA and latest')
    .option('--source <url>', 'the org.opencontainers.image.source annotation (default: the origin remote, credentials removed)')
    .option('--insecure', 'allow plain http to a registry that is not on loopback', false)
    .action(async (opts: { repo: string; to: string; tag?: string[]; source?: string; insecure: boolean }) => {
      // Registry credentials only from the environment, never from flags (the process list shows flags).
      const username = process.env.OCI_USERNAME;
      const password = process.env.OCI_PASSWORD;
      if ((username === undefined) !== (password === undefined)) {
        throw new ValidationError([{ field: 'OCI_USERNAME/OCI_PASSWORD', message: 'set both or neither' }]);
      }
      say(`Publishing ${opts.repo} to ${opts.to}…`);
      // The OCI client and its HTTP stack load only for a publish, not for every command's --help.
      const { publishPlatform } = await import('../oci/publish-platform.js');
      const published = await publishPlatform({
        repoDir: await existingDirectory(opts.repo),
        reference: opts.to,
        // Unset unless asked for: the client then speaks plain http to loopback registries only.
        ...(opts.insecure ? { insecure: true } : {}),
        ...(opts.tag ? { tags: opts.tag } : {}),
        ...(opts.source ? { source: opts.source } : {}),
        ...(username !== undefined && password !== undefined ? { credentials: { username, password } } : {}),
      });
      say(`  ${published.files} files, ${published.size} bytes compressed, revision ${published.revision}`);
      say(`  pushed ${published.repository} as ${published.tags.join(', ')} (${published.digest})`);
      say(`Next: point an OCIRepository (source.toolkit.fluxcd.io/v1) at ${opts.to.replace(/:[^/:]*$/, '')} with ref.digest ${published.digest}.`);
      process.stdout.write(`${published.digest}\n`);
    });
}
