/**
 * Inputs shared by the suites: the reference platform as a git repository and
 * in memory, a 4096-bit sealing certificate (the controller's key size), and
 * bare repositories served by `git daemon` holding many existing clusters.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsRepoReader } from '../src/git/fs-repo-reader.js';
import { initPlatformRepository } from '../src/git/seed-repository.js';
import { renderCluster, type RenderResult } from '../src/gitops/render-cluster.js';
import { memoryRepoReader } from '../src/gitops/repo-reader.js';
import type { ClusterSpec } from '../src/model/cluster-spec.js';
import { platformDir } from '../src/package-paths.js';
import { createTestCertificate } from '../src/sealing/test-certificate.js';
import { parseSealingCertificate, type SealingCertificate } from '../src/sealing/sealing-certificate.js';
import { createBareRepository } from '../test/support/git-server.js';
import { git, tempDir } from './support.js';

export const GENERATOR_VERSION = '0.0.0-bench';

/** A cluster identity for benchmark runs. */
export function benchCluster(name: string): ClusterSpec {
  return { name, domain: `${name}.bench.example.net`, region: 'eu-west-1' };
}

let certificate: { pem: string; parsed: SealingCertificate } | undefined;

/** One 4096-bit sealing certificate per bench process (key generation takes seconds). */
export function sealingCertificate(): { pem: string; parsed: SealingCertificate } {
  if (!certificate) {
    const { certificatePem } = createTestCertificate({ bits: 4096 });
    certificate = { pem: certificatePem, parsed: parseSealingCertificate(certificatePem) };
  }
  return certificate;
}

/** The reference platform committed in a new repository at `dir`, and its files in memory. */
export async function platformRepository(dir: string): Promise<{ commit: string; files: Map<string, string> }> {
  const commit = await initPlatformRepository(dir, platformDir());
  const reader = new FsRepoReader(dir);
  const files = new Map<string, string>();
  for (const path of await reader.list('')) files.set(path, (await reader.read(path)) ?? '');
  return { commit, files };
}

/** Renders `cluster` (pass all, sealed) over the in-memory platform. */
export function renderInMemory(
  files: ReadonlyMap<string, string>,
  cluster: ClusterSpec,
  pass: 'infrastructure' | 'all' = 'all',
  platformCommit?: string,
): Promise<RenderResult> {
  return renderCluster(memoryRepoReader(files), {
    cluster,
    pass,
    ...(pass === 'all' ? { certificate: sealingCertificate().parsed } : {}),
    random: (size) => randomBytes(size),
    generatorVersion: GENERATOR_VERSION,
    ...(platformCommit ? { platformCommit } : {}),
  });
}

/** Quotes a path for git fast-import (C-style, always quoted). */
function fastImportPath(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * Creates a bare repository at `dir` (partial clones allowed) seeded with the
 * reference platform, plus ONE commit adding `count` existing clusters.
 *
 * The clusters are copies of one rendered tree (`template`) under `count` names,
 * written with `git fast-import` straight into the bare repository, so no
 * render, no working tree and no `git add` of tens of thousands of files. The
 * template's name and domain are replaced by each copy's own, so files that
 * carry the identity (Flux Kustomizations, cluster-config, hosts, provenance)
 * are distinct blobs and every cluster has its own trees, as in a real
 * repository; files that carry no identity stay shared blobs, as git would
 * store them anyway.
 */
export async function bareRepositoryWithClusters(dir: string, template: RenderResult, count: number, namePrefix = 'existing'): Promise<void> {
  await createBareRepository(dir);
  // The seed commit is the reference platform, as `generate-gitops-env init` makes it.
  const work = await tempDir('seed');
  try {
    const repo = join(work.path, 'repo');
    await initPlatformRepository(repo, platformDir());
    await git(repo, ['push', '--quiet', dir, 'main:main']);
  } finally {
    await work.remove();
  }
  if (count === 0) return;
  const { name, domain } = template.cluster;
  const prefix = `${template.gitopsPath}/`;
  const chunks: Buffer[] = [];
  const push = (text: string) => chunks.push(Buffer.from(text, 'utf8'));
  const message = `Add ${count} existing clusters (bench fixture)\n`;
  push(`commit refs/heads/main\ncommitter bench <bench@localhost> ${Math.floor(Date.now() / 1000)} +0000\n`);
  push(`data ${Buffer.byteLength(message)}\n${message}\nfrom refs/heads/main^0\n`);
  for (let i = 0; i < count; i++) {
    const clusterName = `${namePrefix}-${String(i + 1).padStart(4, '0')}`;
    const clusterDomain = `${clusterName}.bench.example.net`;
    for (const [path, content] of template.tree) {
      const rel = path.slice(prefix.length);
      const copied = content.split(domain).join(clusterDomain).split(name).join(clusterName);
      const bytes = Buffer.from(copied, 'utf8');
      push(`M 100644 inline ${fastImportPath(`clusters/${clusterName}/${rel}`)}\ndata ${bytes.length}\n`);
      chunks.push(bytes);
      push('\n');
    }
  }
  push('done\n');
  await git(dir, ['fast-import', '--quiet', '--done'], Buffer.concat(chunks));
  // Compact the objects into one pack, as a long-lived server repository would be.
  await git(dir, ['gc', '--quiet', '--prune=now']);
}

/**
 * A fleet one platform change behind: `count` generated clusters in a bare
 * repository at `bare`, cloned to `work`, where the reference's carried-over
 * patch is edited and committed (not pushed), so every cluster would change on upgrade.
 */
export async function fleetBehindReference(dir: string, bare: string, work: string, count: number, log: (message: string) => void): Promise<void> {
  // The template is rendered against the platform as init seeds it; its copies are the fleet.
  const { commit, files } = await platformRepository(join(dir, 'platform'));
  const template = await renderInMemory(files, benchCluster('fleet-template'), 'all', commit);
  log(`writing ${count} generated clusters (${template.tree.size} files each) with git fast-import`);
  await bareRepositoryWithClusters(bare, template, count, 'fleet');
  await git(dir, ['clone', '--quiet', bare, work]);
  const patch = join(work, 'clusters/development/apps/tcr-api-replicas.yaml');
  await writeFile(patch, (await readFile(patch, 'utf8')).replace(/value: \d+/, 'value: 7'));
  await git(work, ['commit', '--quiet', '-am', 'Seven API replicas']);
}
