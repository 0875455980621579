/**
 * `generate-gitops-env seal`: a Secret manifest on stdin sealed into a
 * SealedSecret on stdout, like `kubeseal --cert`.
 */
import { Option, type Command } from 'commander';
import { SEALING_SCOPES, type SealingScope } from '../sealing/seal.js';
import { sealSecretManifest } from '../sealing/seal-secret-manifest.js';
import { choice, readCertificate, readStdin } from './cli-io.js';

/** Adds `seal` to `program`. */
export function registerSealCommand(program: Command): void {
  program
    .command('seal')
    .description('Seal a Secret manifest read on stdin into a SealedSecret on stdout (like kubeseal --cert).')
    .requiredOption('--cert <pem-file>', "the cluster's Sealed Secrets certificate")
    .option('--namespace <ns>', "the Secret's namespace (overrides the manifest's)")
    .option('--name <name>', "the Secret's name (overrides the manifest's)")
    .addOption(new Option('--scope <scope>', 'sealing scope').argParser(choice<SealingScope>(SEALING_SCOPES, '--scope')).default('strict'))
    .action(async (opts: { cert: string; namespace?: string; name?: string; scope: SealingScope }) => {
      const certificate = await readCertificate(opts.cert);
      const manifest = await readStdin();
      process.stdout.write(
        sealSecretManifest(manifest, {
          certificate,
          scope: opts.scope,
          ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
          ...(opts.name !== undefined ? { name: opts.name } : {}),
        }),
      );
    });
}
