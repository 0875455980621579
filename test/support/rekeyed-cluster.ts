/**
 * The start of a rotation, for CLI tests: a work tree with one cluster rendered
 * under an old sealing key, and the certificate the controller serves after its
 * key was renewed, both written as PEM files beside the repository.
 */
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { assertExitZero, runCli } from './cli.js';

/** The old and the new key pair, with their certificates' fingerprints. */
export function renewedKeys() {
  const oldKey = createTestCertificate();
  const newKey = createTestCertificate();
  return {
    oldKey,
    newKey,
    oldFingerprint: parseSealingCertificate(oldKey.certificatePem).fingerprint,
    newFingerprint: parseSealingCertificate(newKey.certificatePem).fingerprint,
  };
}

/**
 * `init` and `render --cert old.pem --registry-auth` of `cluster` in a new temp directory: the registry
 * credential is supplied, so all four of the default platform's credentials are sealed.
 * @returns the directory (holding old.pem and new.pem) and the repository in it
 */
export async function renderedUnderOldKey(prefix: string, cluster: string, keys: ReturnType<typeof renewedKeys>): Promise<{ tmp: string; repo: string }> {
  const tmp = await mkdtemp(join(tmpdir(), prefix));
  const repo = join(tmp, 'repo');
  await writeFile(join(tmp, 'old.pem'), keys.oldKey.certificatePem);
  await writeFile(join(tmp, 'new.pem'), keys.newKey.certificatePem);
  await writeFile(join(tmp, 'registry-auth.json'), JSON.stringify({ auths: { 'ghcr.io': { username: 'robot', password: 'pull-token' } } }));
  assertExitZero(await runCli(['init', repo]));
  assertExitZero(
    await runCli([
      'render',
      '--repo',
      repo,
      '--cluster',
      cluster,
      '--domain',
      `${cluster}.example.net`,
      '--region',
      'eu-west-1',
      '--cert',
      join(tmp, 'old.pem'),
      '--registry-auth',
      join(tmp, 'registry-auth.json'),
    ]),
  );
  return { tmp, repo };
}

/** Every file below `clusters/<cluster>` of `repo`, its content by repository path: a rotation's before and after. */
export async function clusterFiles(repo: string, cluster: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(join(repo, 'clusters', cluster), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(path.slice(repo.length + 1), await readFile(path, 'utf8'));
  }
  return files;
}

/** `rotate` of `cluster` in a repository {@link renderedUnderOldKey} made, to the renewed key (`--cert new.pem`), with `extra` flags. */
export function rotateToNewKey(at: { readonly tmp: string; readonly repo: string }, cluster: string, ...extra: string[]): ReturnType<typeof runCli> {
  return runCli(['rotate', '--repo', at.repo, '--cluster', cluster, '--cert', join(at.tmp, 'new.pem'), ...extra]);
}
