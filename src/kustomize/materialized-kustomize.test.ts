/**
 * kustomize builds a copy we wrote from the reader's files: no link exists in
 * it, a kustomization naming a path outside is refused before kustomize runs,
 * and the root-only load restrictor holds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ValidationError } from '../errors.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { MaterializedKustomize } from './materialized-kustomize.js';

const CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n';

describe('MaterializedKustomize', () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'materialized-kustomize-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('builds in a copy of the reader’s files, once for every build, and removes it afterwards', async () => {
    const reader = memoryRepoReader(
      new Map([
        ['base/kustomization.yaml', 'resources: [cm.yaml]\n'],
        ['base/cm.yaml', CONFIGMAP],
        ['clusters/eu/kustomization.yaml', 'resources: [../../base]\nnamespace: eu\n'],
      ]),
    );
    const builder = new MaterializedKustomize(reader, { scratchRoot: scratch });
    assert.match(await builder.build('/nowhere', 'clusters/eu'), /namespace: eu/);
    assert.match(await builder.build('/nowhere', 'base'), /name: c/);
    assert.equal((await readdir(scratch)).length, 1, 'one copy for both builds');
    await builder.dispose();
    assert.deepEqual(await readdir(scratch), []);
  });

  it('refuses a kustomization naming a path outside the repository before kustomize reads it, and keeps kustomize to the root-only restrictor', async () => {
    await mkdir(join(scratch, 'outside'), { recursive: true });
    const escaping = new MaterializedKustomize(memoryRepoReader(new Map([['clusters/eu/kustomization.yaml', 'resources: [../../../outside]\n']])), {
      scratchRoot: scratch,
    });
    await assert.rejects(
      escaping.build('/nowhere', 'clusters/eu'),
      (error: unknown) => error instanceof ValidationError && /clusters\/eu\/kustomization\.yaml names a path outside the repository/.test(error.message),
    );
    await escaping.dispose();
    // A file above the kustomization's own directory (inside the repository): kustomize's root-only restrictor refuses it.
    const above = new MaterializedKustomize(
      memoryRepoReader(
        new Map([
          ['cm.yaml', CONFIGMAP],
          ['clusters/eu/kustomization.yaml', 'resources: [../../cm.yaml]\n'],
        ]),
      ),
      { scratchRoot: scratch },
    );
    await assert.rejects(
      above.build('/nowhere', 'clusters/eu'),
      (error: unknown) => error instanceof ValidationError && /security; file .* is not in or below/.test(error.message),
    );
    await above.dispose();
  });

  it('gives kustomize no way to the host through an entry that looks like a URL (a property, against kubectl itself)', async () => {
    // A host directory kustomize could build: a kustomization and a ConfigMap holding a marker, committed
    // as a git repository too, which kustomize would clone from a file: URL.
    const host = join(scratch, 'host-secrets');
    await mkdir(host, { recursive: true });
    await writeFile(join(host, 'kustomization.yaml'), 'resources: [cm.yaml]\n');
    await writeFile(join(host, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: host\ndata:\n  secret: HOSTSECRET\n');
    const identity = ['-c', 'user.name=t', '-c', 'user.email=t@example.net'];
    execFileSync('git', ['init', '--quiet', host]);
    execFileSync('git', ['-C', host, 'add', '.']);
    execFileSync('git', ['-C', host, ...identity, 'commit', '--quiet', '--message=host']);
    const hostFromRoot = host.replace(/^\/+/, '');
    // What kubectl 1.35's kustomize reads as a local path when no git URL parser takes it (each prefix was seen
    // to reach the host that way), followed by enough ".." to reach / from the copy, then the host directory.
    const entry = fc.oneof(
      fc
        .record({
          prefix: fc.constantFrom('', './', 'github.com/', 'gitlab.com/', 'bitbucket.org/', 'git@', 'a://', 'https://', 'ssh://', 'http://'),
          climb: fc.integer({ min: 8, max: 24 }),
          slash: fc.constantFrom('/', '//'),
        })
        .map(({ prefix, climb, slash }) => `${prefix}${'..'.concat(slash).repeat(climb)}${hostFromRoot}`),
      fc.constantFrom(`file://${host}`, `FILE://${host}`, `file://${host}//`),
    );
    const field = fc.constantFrom('resources', 'components', 'bases');
    await fc.assert(
      fc.asyncProperty(entry, field, async (path, list) => {
        const builder = new MaterializedKustomize(memoryRepoReader(new Map([['clusters/eu/kustomization.yaml', `${list}:\n- ${JSON.stringify(path)}\n`]])), {
          scratchRoot: scratch,
        });
        try {
          const output = await builder.build('/nowhere', 'clusters/eu').catch((error: unknown) => {
            if (error instanceof ValidationError) return error.message;
            throw error;
          });
          assert.doesNotMatch(output, /HOSTSECRET/, `${list}: [${path}] reached the host`);
        } finally {
          await builder.dispose();
        }
      }),
      { numRuns: 30 },
    );
  });
});
