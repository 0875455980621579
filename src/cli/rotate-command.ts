/**
 * `generate-gitops-env rotate`: reseal a generated cluster's credentials with
 * fresh values under the certificate its controller serves now, in the work
 * tree (commit and push as after `render`). Without `--credential`, it reseals
 * exactly the SealedSecrets recorded as sealed with another certificate.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { writeTree } from '../git/write-tree.js';
import { rotateCredentials } from '../gitops/rotate-credentials.js';
import { packageVersion } from '../package-paths.js';
import { readInputFile } from '../read-input-file.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';

interface RotateFlags {
  repo: string;
  cluster: string;
  cert: string;
  credential?: string[];
  dryRun?: boolean;
}

/** Adds `rotate` to the generator CLI. */
export function registerRotateCommand(cli: Command): void {
  cli
    .command('rotate')
    .description("Reseal a generated cluster's credentials with fresh values under its current certificate (default: the ones sealed with another certificate).")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'a cluster rendered by this generator (clusters/NAME/provenance.yaml)')
    .requiredOption('--cert <pem-file>', "the certificate the cluster's Sealed Secrets controller serves now")
    .option('--credential <name...>', 'rotate these credentials (name or namespace/name from scaffold.yaml), whatever they were sealed with')
    .option('--dry-run', 'list what would be resealed; write nothing')
    .action(async (opts: RotateFlags) => {
      const say = (line: string) => process.stderr.write(`${line}\n`);
      const dir = resolve(opts.repo);
      const certificate = parseSealingCertificate(await readInputFile(opts.cert, '--cert'), '--cert');
      const plan = await rotateCredentials(new FsRepoReader(dir), {
        cluster: opts.cluster,
        certificate,
        random: (size) => randomBytes(size),
        generatorVersion: packageVersion(),
        ...(opts.credential ? { credentials: opts.credential } : {}),
      });
      say(`Certificate sha256:${certificate.fingerprint}`);
      for (const s of plan.stale) say(`  sealed with ${s.sealedWith ?? 'an unrecorded certificate'}: ${s.namespace}/${s.name} (${s.file})`);
      if (plan.stale.length === 0) say(`  every SealedSecret of ${plan.gitopsPath} is sealed with it`);
      if (!opts.dryRun) await writeTree(dir, plan.files);
      for (const c of plan.rotated) say(`  ${opts.dryRun ? 'would reseal' : 'resealed'} ${c.namespace}/${c.name} with fresh values (${plan.gitopsPath}/${c.file})`);
      for (const s of plan.remaining) {
        say(`  still sealed with another certificate (not a credential of scaffold.yaml, or not chosen): ${s.namespace}/${s.name} (${s.file})`);
      }
      say(plan.rotated.length === 0 ? 'Nothing to rotate.' : opts.dryRun ? 'Dry run: nothing written.' : `Next: verify, commit and push ${plan.gitopsPath}; the controller replaces the Secrets, and workloads reading them at start need a restart.`);
      for (const path of plan.files.keys()) process.stdout.write(`${path}\n`);
    });
}
