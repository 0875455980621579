/**
 * `generate-gitops-env seal`: a Secret manifest on stdin sealed into a
 * SealedSecret on stdout, like `kubeseal --cert`.
 */
import { Option, type Command } from 'commander';
import { parse } from 'yaml';
import { SEALING_SCOPES, type SealingScope } from '../sealing/seal.js';
import { readCertificate, readStdin } from './cli-io.js';
import { formatData, outputOption, type OutputFormat } from './output-format.js';

/** Adds `seal` to `program`. */
export function registerSealCommand(program: Command): void {
  program
    .command('seal')
    .description('Seal a Secret manifest read on stdin into a SealedSecret on stdout (like kubeseal --cert).')
    .requiredOption('--cert <pem-file>', "the cluster's Sealed Secrets certificate")
    .option('--namespace <ns>', "the Secret's namespace (overrides the manifest's)")
    .option('--name <name>', "the Secret's name (overrides the manifest's)")
    .addOption(new Option('--scope <scope>', 'sealing scope').choices(SEALING_SCOPES).default('strict'))
    .addOption(outputOption().default('yaml'))
    .action(async (opts: { cert: string; namespace?: string; name?: string; scope: SealingScope; output: OutputFormat }) => {
      const certificate = await readCertificate(opts.cert);
      const manifest = await readStdin();
      // Loaded when the command runs: `--help` and `--version` load none of it.
      const { sealSecretManifest } = await import('../sealing/seal-secret-manifest.js');
      const sealed = sealSecretManifest(manifest, {
        certificate,
        scope: opts.scope,
        ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
      });
      // The manifest is YAML already: text and yaml print it as it is.
      process.stdout.write(opts.output === 'json' ? formatData(parse(sealed), 'json') : sealed);
    });
}
