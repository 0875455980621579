/**
 * `generate-gitops-env rotate`: move a generated cluster's SealedSecrets to the
 * certificate its controller serves now, in the work tree (commit and push as
 * after `render`). By default the values stay the same: each SealedSecret is
 * re-encrypted with the controller's old private key (`--recovery-private-key`,
 * as kubeseal names it), so no database or workload notices. `--fresh-values`
 * seals new values instead, and writes the Jobs that set them where the
 * databases keep them. Without `--credential`, it rotates exactly the
 * SealedSecrets recorded as sealed with another certificate.
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { ValidationError } from '../errors.js';
import type { RotationValues } from '../gitops/rotate-credentials.js';
import { packageVersion } from '../package-paths.js';
import { readInputFile } from '../read-input-file.js';
import { existingDirectory } from './cli-io.js';

interface RotateFlags {
  repo: string;
  cluster: string;
  cert: string;
  credential?: string[];
  recoveryPrivateKey?: string[];
  freshValues?: boolean;
  dryRun?: boolean;
}

/** Same values (the old keys given) or fresh ones (asked for); never both, never a silent choice. */
async function valuesOf(opts: RotateFlags): Promise<RotationValues | undefined> {
  if (opts.freshValues === true && opts.recoveryPrivateKey !== undefined) {
    throw new ValidationError([
      { field: 'fresh-values', message: 'either keep the values (--recovery-private-key) or seal fresh ones (--fresh-values), not both' },
    ]);
  }
  if (opts.freshValues === true) return { fresh: { random: (size) => randomBytes(size) } };
  if (opts.recoveryPrivateKey === undefined) return undefined;
  const { parseRecoveryKeys } = await import('../sealing/reencrypt.js');
  const privateKeys = [];
  for (const file of opts.recoveryPrivateKey)
    privateKeys.push(...parseRecoveryKeys(await readInputFile(file, '--recovery-private-key'), '--recovery-private-key'));
  return { keep: { privateKeys } };
}

/** Adds `rotate` to the generator CLI. */
export function registerRotateCommand(cli: Command): void {
  cli
    .command('rotate')
    .description(
      "Move a generated cluster's SealedSecrets to its controller's current certificate (default: the ones sealed with another certificate). The values stay the same (re-encrypted with --recovery-private-key); --fresh-values seals new ones and writes the Jobs that change them in the databases.",
    )
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'a cluster rendered by this generator (clusters/NAME/provenance.yaml)')
    .requiredOption('--cert <pem-file>', "the certificate the cluster's Sealed Secrets controller serves now")
    .option('--credential <name...>', 'rotate these credentials (name or namespace/name from scaffold.yaml), whatever they were sealed with')
    .option(
      '--recovery-private-key <file...>',
      "the controller's old private key(s), PEM or its key backup (kubectl get secret -l sealedsecrets.bitnami.com/sealed-secrets-key -o yaml): re-encrypt the same values",
    )
    .option('--fresh-values', 'seal new values instead, and write the Jobs that set them where the databases keep them')
    .option('--dry-run', 'list what would be rotated; write nothing')
    .action(async (opts: RotateFlags) => {
      const say = (line: string) => process.stderr.write(`${line}\n`);
      const dir = await existingDirectory(opts.repo);
      // Loaded when the command runs: `--help` and `--version` load none of it.
      const [{ FsRepoReader }, { writeTree }, { rotateCredentials }, { parseSealingCertificate }] = await Promise.all([
        import('../git/fs-repo-reader.js'),
        import('../git/write-tree.js'),
        import('../gitops/rotate-credentials.js'),
        import('../sealing/sealing-certificate.js'),
      ]);
      const certificate = parseSealingCertificate(await readInputFile(opts.cert, '--cert'), '--cert');
      const values = await valuesOf(opts);
      const reader = new FsRepoReader(dir);
      // Planning with fresh values writes nothing and says what is stale; the values are chosen before anything is written.
      const plan = await rotateCredentials(reader, {
        cluster: opts.cluster,
        certificate,
        values: values ?? { fresh: { random: (size) => randomBytes(size) } },
        generatorVersion: packageVersion(),
        ...(opts.credential ? { credentials: opts.credential } : {}),
      });
      say(`Certificate sha256:${certificate.fingerprint}`);
      for (const s of plan.stale) say(`  sealed with ${s.sealedWith ?? 'an unrecorded certificate'}: ${s.namespace}/${s.name} (${s.file})`);
      if (plan.stale.length === 0) say(`  every SealedSecret of ${plan.gitopsPath} is sealed with it`);
      if (plan.rotated.length > 0 && values === undefined && opts.dryRun !== true) {
        throw new ValidationError([
          {
            field: 'recovery-private-key',
            message: `rotating ${plan.rotated.map((c) => `${c.namespace}/${c.name}`).join(', ')} keeps their values: give the controller's old private key (--recovery-private-key) to re-encrypt them, or ask for new values with --fresh-values (which also changes them in the databases)`,
          },
        ]);
      }
      if (opts.dryRun !== true) await writeTree(dir, plan.files);
      const verb = opts.dryRun ? 'would reseal' : 'resealed';
      for (const c of plan.rotated)
        say(
          `  ${verb} ${c.namespace}/${c.name} ${c.values === 'same' ? 'with the same values' : values === undefined ? '(choose: same values or --fresh-values)' : 'with fresh values'} (${plan.gitopsPath}/${c.file})`,
        );
      for (const s of plan.remaining) {
        const why = plan.suppliedRemaining.includes(`${s.namespace}/${s.name}`)
          ? 'supplied by the caller, not generated: only --recovery-private-key re-encrypts it'
          : 'not a credential of scaffold.yaml, or not chosen';
        say(`  still sealed with another certificate (${why}): ${s.namespace}/${s.name} (${s.file})`);
      }
      if (values !== undefined && 'fresh' in values && plan.rotated.length > 0) {
        for (const job of plan.passwordChanges) say(`  Job ${job.namespace}/${job.job} sets the new ${job.credential} passwords in the database (${job.file})`);
        for (const name of plan.readOnly) say(`  ${name}: no database keeps it (no passwordChange in scaffold.yaml); its readers only need the new Secret`);
        say(`  restart to pick up the new values: ${plan.restart.join(', ') || 'nothing reads them'}`);
      }
      say(
        plan.rotated.length === 0
          ? 'Nothing to rotate.'
          : opts.dryRun
            ? 'Dry run: nothing written.'
            : values !== undefined && 'keep' in values
              ? `Next: verify, commit and push ${plan.gitopsPath}; the values are unchanged, so nothing restarts.`
              : `Next: verify, commit and push ${plan.gitopsPath}; the Jobs change the passwords once the controller has unsealed them, then restart the workloads above.`,
      );
      // Without a choice of values (a dry run), only the SealedSecrets are known to change.
      const paths = values === undefined ? plan.rotated.map((c) => `${plan.gitopsPath}/${c.file}`) : [...plan.files.keys()];
      for (const path of paths) process.stdout.write(`${path}\n`);
    });
}
