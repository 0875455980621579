import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { ValidationError } from '../errors.js';
import { platformDir } from '../package-paths.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { renderCluster, type RenderOptions } from './render-cluster.js';
import { memoryRepoReader } from './repo-reader.js';

const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
const random = (n: number) => new Uint8Array(n).map((_, i) => (i * 7) % 256);
const CLUSTER = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };

async function defaultPlatform(): Promise<Map<string, string>> {
  const root = platformDir('default');
  const files = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(root, join(entry.parentPath, entry.name)).split(sep).join('/');
    files.set(path, await readFile(join(root, path), 'utf8'));
  }
  return files;
}

const render = async (files: Map<string, string>, options: Partial<RenderOptions> & { enable?: string[] }) =>
  renderCluster(memoryRepoReader(files), {
    cluster: { ...CLUSTER, ...(options.enable ? { enable_layers: options.enable } : {}) },
    pass: 'all',
    certificate,
    random,
    generatorVersion: 't',
    ...options,
  });

async function issueOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ValidationError) return `${error.issues[0]!.field}: ${error.issues[0]!.message}`;
    throw error;
  }
  return assert.fail('expected a ValidationError');
}

describe('previews on a cluster of the default platform', () => {
  it('are written only where the cluster opts in, and kept on a re-render that names no layers', async () => {
    const files = await defaultPlatform();
    const off = await render(files, { fluxInstance: true, syncUrl: 'https://github.com/acme/platform.git' });
    assert.equal(
      [...off.tree.keys()].some((p) => p.includes('/previews')),
      false,
    );
    const on = await render(files, { fluxInstance: true, syncUrl: 'https://github.com/acme/platform.git', enable: ['previews'] });
    assert.deepEqual(
      [...on.tree.keys()].filter((p) => p.includes('previews')),
      [
        'clusters/eu-prod-1/flux/previews.yaml',
        'clusters/eu-prod-1/previews/input-provider.yaml',
        'clusters/eu-prod-1/previews/kustomization.yaml',
        'clusters/eu-prod-1/previews/rbac.yaml',
        'clusters/eu-prod-1/previews/resource-set.yaml',
      ],
    );
    assert.deepEqual(on.cluster.enable_layers, ['previews']);
    const again = await render(new Map([...files, ...on.tree]), {});
    assert.ok(again.tree.has('clusters/eu-prod-1/previews/resource-set.yaml'), 'the provenance keeps the opt-in');
  });

  it('refuse a cluster without the Flux Operator, a forge the operator cannot list, and a sync URL that is not https', async () => {
    const files = await defaultPlatform();
    assert.match(
      await issueOf(render(files, { enable: ['previews'] })),
      /^cluster\.enable_layers: previews are run by the Flux Operator .* which this cluster does not have/,
    );
    assert.match(
      await issueOf(render(files, { fluxInstance: true, syncUrl: 'https://git.example.net/acme/platform.git', enable: ['previews'] })),
      /^scaffold\.yaml\.previews\.forge: cannot tell the forge of https:\/\/git\.example\.net\/acme\/platform\.git from its host: set github or gitlab/,
    );
    assert.match(
      await issueOf(render(files, { fluxInstance: true, syncUrl: 'ssh://git@github.com/acme/platform.git', syncSecret: 'flux-system', enable: ['previews'] })),
      /^scaffold\.yaml\.previews\.url: the FluxInstance syncs ssh:\/\/git@github\.com\/acme\/platform\.git, which is not a repository's https:\/\/ address/,
    );
  });
});
