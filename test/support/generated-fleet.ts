/**
 * A GitOps repository holding generated clusters that are behind their
 * reference: the shipped platform, each cluster rendered (pass `all`, sealed
 * with a test certificate), then an overlay patch of the reference edited in a
 * later commit, so an upgrade of any of them has something to change. What
 * upgrade and removal tests start from.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { writeFluxBootstrap } from './flux-bootstrap.js';
import { git } from './git.js';

/** The reference's patch the fleet is behind on (the API's replica count). */
export const REFERENCE_PATCH = 'clusters/development/apps/tcr-api-replicas.yaml';

/** Options of {@link createGeneratedFleet}. */
export interface GeneratedFleetOptions {
  readonly clusters: readonly string[];
  /** Clusters that also get flux bootstrap's `flux-system/` (files the generator did not write). */
  readonly fluxBootstrapped?: readonly string[];
  /** The API replicas the reference is changed to after the clusters were rendered. @default 4 */
  readonly replicas?: number;
}

/**
 * Builds the repository in the working copy `work` (created) and clones it bare to `bare`.
 * @returns the bare repository's `main` commit
 */
export async function createGeneratedFleet(work: string, bare: string, options: GeneratedFleetOptions): Promise<string> {
  await initPlatformRepository(work, platformDir());
  const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
  for (const name of options.clusters) {
    await renderWorkTree(work, { cluster: { name, domain: `${name}.example.net`, region: 'eu-west-1' }, pass: 'all', certificate, generatorVersion: 'test' });
  }
  for (const name of options.fluxBootstrapped ?? []) await writeFluxBootstrap(work, name);
  await git(work, 'add', '--all');
  await git(work, 'commit', '--quiet', '-m', `${options.clusters.length} clusters`);
  const patch = join(work, REFERENCE_PATCH);
  await writeFile(patch, (await readFile(patch, 'utf8')).replace('value: 3', `value: ${options.replicas ?? 4}`));
  await git(work, 'add', '--all');
  await git(work, 'commit', '--quiet', '-m', 'more API replicas in the reference');
  await git(work, 'clone', '--quiet', '--bare', work, bare);
  for (const [key, value] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
    ['receive.denyNonFastForwards', 'true'],
  ] as const)
    await git(bare, 'config', key, value);
  return git(bare, 'rev-parse', 'main');
}

/**
 * Changes the reference's API replicas from `from` to `to` in one commit pushed to `bare`,
 * starting from the branch as it is (runs may have pushed since).
 */
export async function editReferenceReplicas(work: string, bare: string, from: number, to: number): Promise<void> {
  await git(work, 'pull', '--quiet', '--ff-only', bare, 'main');
  const patch = join(work, REFERENCE_PATCH);
  await writeFile(patch, (await readFile(patch, 'utf8')).replace(`value: ${from}`, `value: ${to}`));
  await git(work, 'add', '--all');
  await git(work, '-c', 'user.name=test', '-c', 'user.email=test@example.invalid', 'commit', '--quiet', '-m', `${to} API replicas`);
  await git(work, 'push', '--quiet', bare, 'main:main');
}
