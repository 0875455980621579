/**
 * `generate-gitops-env rotate` refuses a contradictory choice of values: keeping
 * them (the controller's old key given) and sealing fresh ones are exclusive, and
 * neither is chosen silently. Nothing is written when it refuses.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../test/support/cli.js';
import { clusterFiles, renderedUnderOldKey, renewedKeys } from '../../test/support/rekeyed-cluster.js';

const CLUSTER = 'eu-rot-2';

describe('generate-gitops-env rotate with both --fresh-values and --recovery-private-key', () => {
  let tmp: string;
  let repo: string;
  const keys = renewedKeys();

  before(async () => {
    ({ tmp, repo } = await renderedUnderOldKey('rotate-command-', CLUSTER, keys));
    await writeFile(join(tmp, 'old.key'), keys.oldKey.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('refuses with exit 2 and writes nothing, instead of picking fresh values over the key it was given', async () => {
    const before = await clusterFiles(repo, CLUSTER);
    const result = await runCli([
      'rotate',
      '--repo',
      repo,
      '--cluster',
      CLUSTER,
      '--cert',
      join(tmp, 'new.pem'),
      '--fresh-values',
      '--recovery-private-key',
      join(tmp, 'old.key'),
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /either keep the values \(--recovery-private-key\) or seal fresh ones \(--fresh-values\), not both/);
    assert.equal(result.stdout, '');
    assert.deepEqual(await clusterFiles(repo, CLUSTER), before);
  });
});
