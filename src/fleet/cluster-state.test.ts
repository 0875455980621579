/**
 * A cluster's state: a tree the real renderer left after only its
 * infrastructure pass is `incomplete`, never up to date, and a run's outcome
 * never hides that; the rest follows the documented precedence.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { renderWorkTree } from '../git/render-work-tree.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { RUN_ACTIONS } from '../model/run-action.js';
import { platformDir } from '../package-paths.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { clusterEntryOf, type ClusterEntry } from './cluster-registry.js';
import { clusterStateOf, type LastRunOutcome } from './cluster-state.js';
import { clusterView } from './cluster-view.js';

const CLUSTER = { name: 'eu-half-1', domain: 'eu-half-1.example.net', region: 'eu-west-1' };
const STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const;
const outcomeArb: fc.Arbitrary<LastRunOutcome | undefined> = fc.option(
  fc.record({ action: fc.constantFrom(...RUN_ACTIONS), status: fc.constantFrom(...STATUSES) }),
  { nil: undefined },
);

describe('cluster state', () => {
  let tmp: string;
  let infrastructureOnly: string;
  let complete: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'cluster-state-'));
    const repo = join(tmp, 'repo');
    await initPlatformRepository(repo, platformDir());
    await renderWorkTree(repo, { cluster: CLUSTER, pass: 'infrastructure', generatorVersion: 'test' });
    infrastructureOnly = await readFile(join(repo, 'clusters', CLUSTER.name, 'provenance.yaml'), 'utf8');
    const certificate = parseSealingCertificate(createTestCertificate().certificatePem);
    await renderWorkTree(repo, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: 'test' });
    complete = await readFile(join(repo, 'clusters', CLUSTER.name, 'provenance.yaml'), 'utf8');
  });

  after(async () => {
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  });

  it('calls the tree an infrastructure pass leaves incomplete, though it is rendered from the current platform commit', () => {
    const platformCommit = /platformCommit: (\S+)/.exec(infrastructureOnly)?.[1] ?? 'unknown';
    const entry = clusterEntryOf(CLUSTER.name, infrastructureOnly, {
      reference: 'development',
      platformCommit: platformCommit === 'unknown' ? 'c0ffee' : platformCommit,
    });
    const view = clusterView(entry, 'c0ffee', undefined, { action: 'scaffold', status: 'cancelled' });
    assert.equal(view.state, 'incomplete');
    assert.notEqual(view.state, 'up_to_date');
    // The same cluster once the full pass is pushed: complete, so its freshness shows.
    const full = clusterEntryOf(CLUSTER.name, complete, { reference: 'development', platformCommit: 'c0ffee' });
    assert.ok(['behind', 'up_to_date', 'complete'].includes(clusterView(full, 'c0ffee').state ?? ''));
    assert.equal(clusterView(full, 'c0ffee', undefined, { action: 'scaffold', status: 'failed' }).state, 'failed');
  });

  it('never says up to date, behind or complete of a tree with only the infrastructure pass, whatever the last run', () => {
    fc.assert(
      fc.property(fc.constantFrom('up_to_date', 'behind', 'unknown') as fc.Arbitrary<ClusterEntry['freshness']>, outcomeArb, (freshness, outcome) => {
        const entry = {
          kind: 'generated',
          freshness,
          provenance: { generatorVersion: 't', reference: 'development', platformCommit: 'abc', pass: 'infrastructure' },
        } as const;
        const state = clusterStateOf(entry, outcome);
        assert.ok(state === 'incomplete' || state === 'removing', `${String(state)} for ${JSON.stringify(outcome)}`);
        assert.equal(state === 'removing', outcome?.action === 'remove' && (outcome.status === 'pending' || outcome.status === 'running'));
      }),
    );
  });

  it('gives a complete tree its freshness unless its last run failed or a removal is under way', () => {
    const entry = (freshness: ClusterEntry['freshness']) =>
      ({ kind: 'generated', freshness, provenance: { generatorVersion: 't', reference: 'development', platformCommit: 'abc', pass: 'all' } }) as const;
    assert.equal(clusterStateOf(entry('up_to_date')), 'up_to_date');
    assert.equal(clusterStateOf(entry('behind'), { action: 'upgrade', status: 'succeeded' }), 'behind');
    assert.equal(clusterStateOf(entry('unknown')), 'complete');
    assert.equal(clusterStateOf(entry('up_to_date'), { action: 'upgrade', status: 'cancelled' }), 'failed');
    assert.equal(clusterStateOf(entry('up_to_date'), { action: 'remove', status: 'running' }), 'removing');
    assert.equal(clusterStateOf({ kind: 'reference', freshness: 'not_applicable' }), undefined);
    assert.equal(clusterStateOf({ kind: 'unmanaged', freshness: 'not_applicable' }), undefined);
  });
});
