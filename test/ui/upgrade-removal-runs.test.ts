/**
 * What the dashboard shows of upgrade and removal runs beside scaffolds: the
 * run's title and action, its own step table, the files its commit changed
 * (and, for a removal, kept), what a removal started, and a retry that asks
 * for no sealing input because the run seals nothing. Retry bodies are checked
 * with the service's own request schema.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { retryRequestSchema } from '../../src/http/wire-schemas.js';
import { actionName, removalShown, runHeading, sealingShown, shownChanges } from '../../ui/src/run-action-view.js';
import { EMPTY_SECRETS, sealingModesOf, secretIssues, secretsRequest } from '../../ui/src/secret-values.js';
import { shownSteps, stepCount, stepTitle } from '../../ui/src/steps.js';
import type { RunStep } from '../../ui/src/run-types.js';

const cluster = { name: 'eu-prod-1' };
const pending = (step: number, name: string): RunStep => ({ step, name, status: 'pending' });

describe('what a run does', () => {
  it('titles a run by its action and names the action in the run list', () => {
    assert.equal(runHeading({ action: 'scaffold', cluster }), 'Scaffold of eu-prod-1');
    assert.equal(runHeading({ action: 'upgrade', cluster }), 'Upgrade of eu-prod-1');
    assert.equal(runHeading({ action: 'remove', cluster }), 'Removal of eu-prod-1');
    assert.deepEqual((['scaffold', 'upgrade', 'remove'] as const).map(actionName), ['scaffold', 'upgrade', 'removal']);
  });

  it("titles each step from its action's table: seven for a scaffold, three for an upgrade, five for a removal", () => {
    assert.deepEqual([stepCount('scaffold'), stepCount('upgrade'), stepCount('remove')], [7, 3, 5]);
    assert.equal(stepTitle('scaffold', 2), 'Render the infrastructure layer');
    assert.equal(stepTitle('upgrade', 2), 'Render again from the reference, credentials kept');
    assert.equal(stepTitle('upgrade', 4), undefined, 'no fourth step');
    assert.equal(stepTitle('remove', 3), 'Wait for Flux to apply the lift');
    assert.equal(stepTitle('remove', 4), "Remove the generator's files");
    assert.equal(stepTitle('remove', 6), undefined, 'no sixth step');
  });

  it("skips steps 4–5 only for a scaffold given its certificate, never an upgrade's or a removal's", () => {
    const scaffold = shownSteps({
      action: 'scaffold',
      status: 'running',
      sealing: 'certificate',
      steps: [1, 2, 3, 4, 5, 6, 7].map((n) => pending(n, `s${n}`)),
    });
    assert.deepEqual(
      scaffold.map((s) => s.status),
      ['pending', 'pending', 'pending', 'skipped', 'skipped', 'pending', 'pending'],
    );
    const upgrade = shownSteps({
      action: 'upgrade',
      status: 'failed',
      sealing: 'none',
      steps: [{ step: 1, name: 'clone', status: 'succeeded' }, { step: 2, name: 'render-upgrade', status: 'running' }, pending(3, 'push-upgrade')],
    });
    assert.deepEqual(
      upgrade.map((s) => s.status),
      ['succeeded', 'failed', 'not-run'],
    );
  });

  it('says how a run seals: from the request, from the cluster, or not at all', () => {
    assert.match(sealingShown({ action: 'scaffold', sealing: 'certificate' }), /certificate from the request/);
    assert.match(sealingShown({ action: 'scaffold', sealing: 'kubeconfig' }), /controller/);
    assert.equal(sealingShown({ action: 'upgrade', sealing: 'none' }), 'none: an upgrade keeps every sealed credential as it is');
    assert.equal(sealingShown({ action: 'remove', sealing: 'none' }), 'none: a removal seals nothing');
  });
});

describe("an upgrade's or a removal's changes", () => {
  it("shows an upgrade's file counts and the credentials it kept", () => {
    assert.deepEqual(shownChanges({ action: 'upgrade', status: 'succeeded', changes: { added: 1, modified: 4, removed: 0, credentials_kept: 3 } }), {
      files: [
        ['added', 1],
        ['modified', 4],
        ['removed', 0],
      ],
      summary: '1 added, 4 modified, 0 removed',
      credentialsKept: '3 sealed credentials kept byte for byte',
      kept: [],
    });
    assert.equal(
      shownChanges({ action: 'upgrade', status: 'succeeded', changes: { added: 0, modified: 0, removed: 0 } })?.summary,
      'nothing changed: already up to date',
    );
  });

  it("shows a removal's counts and the files it left in place (flux bootstrap's flux-system/)", () => {
    const shown = shownChanges({
      action: 'remove',
      status: 'succeeded',
      changes: { added: 0, modified: 0, removed: 41, kept: ['clusters/eu-prod-1/flux-system/gotk-sync.yaml'] },
    });
    assert.equal(shown?.summary, '41 removed');
    assert.equal(shown?.credentialsKept, undefined);
    assert.deepEqual(shown?.kept, ['clusters/eu-prod-1/flux-system/gotk-sync.yaml']);
  });

  it('has no changes section for a scaffold, and says when they are not known yet', () => {
    assert.equal(shownChanges({ action: 'scaffold', status: 'succeeded', changes: null }), undefined);
    assert.equal(shownChanges({ action: 'upgrade', status: 'running', changes: null })?.summary, 'known once the run ends');
    assert.equal(shownChanges({ action: 'remove', status: 'failed', changes: null })?.summary, 'none: the run ended without a commit');
  });
});

describe('the removal confirmation on the cluster page', () => {
  it("lists, from the removal's dry run, every file it deletes and the ones it keeps", () => {
    const shown = removalShown({
      dry_run: true,
      cluster: 'eu-prod-1',
      removed: ['clusters/eu-prod-1/apps/kustomization.yaml', 'clusters/eu-prod-1/provenance.yaml'],
      kept: ['clusters/eu-prod-1/flux-system/gotk-sync.yaml'],
      flux_bootstrap: true,
    });
    assert.equal(shown.summary, 'Deletes 2 files the generator wrote under clusters/eu-prod-1/:');
    assert.deepEqual(shown.removed, ['clusters/eu-prod-1/apps/kustomization.yaml', 'clusters/eu-prod-1/provenance.yaml']);
    assert.deepEqual(shown.kept, ['clusters/eu-prod-1/flux-system/gotk-sync.yaml']);
    assert.match(shown.fluxBootstrap ?? '', /flux-system\/ written by flux bootstrap is kept/);
    const one = removalShown({ dry_run: true, cluster: 'c', removed: ['clusters/c/x.yaml'], kept: [], flux_bootstrap: false });
    assert.equal(one.summary, 'Deletes 1 file the generator wrote under clusters/c/:');
    assert.equal(one.fluxBootstrap, undefined);
  });
});

describe('retrying an upgrade or a removal', () => {
  it('asks for nothing for a run that seals nothing, and sends nothing: the service uses its own forge credentials', () => {
    assert.deepEqual(sealingModesOf('none'), ['none']);
    assert.deepEqual(sealingModesOf('certificate'), ['certificate']);
    assert.deepEqual(sealingModesOf('kubeconfig'), ['kubeconfig-inline', 'kubeconfig-secret']);
    const values = { ...EMPTY_SECRETS, mode: 'none' as const, token: 'ghp_example', certificate: 'left over', registryAuth: '{"auths":{}}' };
    assert.deepEqual(secretIssues(values), new Map(), 'nothing to ask for');
    const body = secretsRequest(values);
    assert.deepEqual(body, {}, 'no certificate, kubeconfig, registry secret or repository token');
    assert.ok(retryRequestSchema.safeParse(body).success);
  });
});
