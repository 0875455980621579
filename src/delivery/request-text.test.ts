/**
 * What an upgrade run's and a removal run's pull/merge request say: a reviewer
 * sees which cluster, from which reference, and every file the commit touches
 * (or keeps) without opening the diff.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bodyOf, labelsOf, reviewBranchOf, titleOf } from './request-text.js';

const cluster = { name: 'eu-2', domain: 'eu-2.example.net', region: 'eu-west-1' };

describe('request text of fleet runs', () => {
  it('names an upgrade after its reference and lists the files it writes and removes', () => {
    const summary = { written: ['clusters/eu-2/apps/tcr-api-replicas.yaml'], removed: ['clusters/eu-2/old.yaml'], verify: 'passed: no findings' };
    const request = { cluster, pass: 'upgrade', reference: 'staging', runId: 'run-1', summary, branch: 'main' } as const;
    assert.equal(titleOf(request), 'Upgrade eu-2 from the reference staging');
    const body = bodyOf(request);
    assert.match(body, /from the reference environment `staging`/);
    assert.match(body, /### Files written \(1\)\n\n- `clusters\/eu-2\/apps\/tcr-api-replicas.yaml`/);
    assert.match(body, /### Files removed \(1\)\n\n- `clusters\/eu-2\/old.yaml`/);
    assert.match(body, /\*\*Verify:\*\* passed: no findings/);
    assert.match(body, /Run `run-1`/);
    assert.equal(reviewBranchOf(cluster.name, request.pass), 'scaffold/eu-2/upgrade');
    assert.deepEqual(labelsOf(request.pass), ['gitops-scaffolder', 'scaffold-pass:upgrade']);
  });

  it('names a removal and lists the files removed and those kept', () => {
    const summary = { written: [], removed: ['clusters/eu-2/provenance.yaml'], kept: ['clusters/eu-2/flux-system/gotk-sync.yaml'], verify: 'not run' };
    const request = { cluster, pass: 'remove', runId: 'run-2', summary, branch: 'main' } as const;
    assert.equal(titleOf(request), "Remove eu-2: the generator's files");
    const body = bodyOf(request);
    assert.match(body, /### Files removed \(1\)\n\n- `clusters\/eu-2\/provenance.yaml`/);
    assert.match(body, /### Files kept \(not written by gitops-scaffolder\) \(1\)\n\n- `clusters\/eu-2\/flux-system\/gotk-sync.yaml`/);
    assert.match(body, /merged into `main`/);
  });

  it('names the first 50 files of a long list and counts the rest', () => {
    const removed = Array.from({ length: 53 }, (_, i) => `clusters/eu-2/apps/app-${i + 1}.yaml`);
    const body = bodyOf({ cluster, pass: 'remove', runId: 'run-3', summary: { written: [], removed, verify: 'not run' }, branch: 'main' });
    assert.match(body, /### Files removed \(53\)\n\n- `clusters\/eu-2\/apps\/app-1.yaml`/);
    assert.match(body, /- `clusters\/eu-2\/apps\/app-50.yaml`\n- … and 3 more\n/);
    assert.doesNotMatch(body, /app-51\.yaml/);
  });
});
