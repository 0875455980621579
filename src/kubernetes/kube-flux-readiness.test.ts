import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeConfig } from '@kubernetes/client-node';
import { startKubeApiDouble, type JsonObject, type KubeApiDouble } from '../../test/support/kube-api-double.js';
import { TimeoutError, VerificationError } from '../errors.js';
import type { KustomizationReadiness } from '../gitops/kustomization-readiness.js';
import { loadKubeConfig } from './kube-config.js';
import { KubeFluxReadiness } from './kube-flux-readiness.js';

const COMMIT = 'a1afe267b54f38b46b487f6e938a6fd508278c07';
const OLDER = '0b4f1c6a3d2e5f708192a3b4c5d6e7f809123456';
const SOURCE = { kind: 'GitRepository', namespace: 'flux-system', name: 'flux-system' };

/** A Kustomization's status as kustomize-controller writes it. */
function status(ready: 'True' | 'False' | 'Unknown', reason: string, message: string, applied?: string, attempted = applied): JsonObject {
  return {
    status: {
      observedGeneration: 1,
      ...(applied ? { lastAppliedRevision: `main@sha1:${applied}` } : {}),
      ...(attempted ? { lastAttemptedRevision: `main@sha1:${attempted}` } : {}),
      conditions: [{ type: 'Ready', status: ready, reason, message, lastTransitionTime: '2026-12-03T07:00:00Z', observedGeneration: 1 }],
    },
  };
}
const readyAt = (sha: string) => status('True', 'ReconciliationSucceeded', `Applied revision: main@sha1:${sha}`, sha);

describe('KubeFluxReadiness', () => {
  let double: KubeApiDouble;
  let dir: string;
  let kubeConfig: KubeConfig;
  let namespace = 0;

  before(async () => {
    double = await startKubeApiDouble();
    dir = await mkdtemp(join(tmpdir(), 'flux-readiness-'));
    kubeConfig = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir) });
  });
  after(async () => {
    await double.stop();
    await rm(dir, { recursive: true, force: true });
  });
  // Each test in its own namespace: the double is shared.
  const fresh = () => `flux-${++namespace}`;
  /**
   * Resolves once the waiter has listed `ns`'s Kustomizations `more` more times
   * than when called: a state set after this has been seen before it changed, on
   * a slow machine too (a fixed sleep would pass without the waiter ever seeing it).
   */
  const polled = async (ns: string, more = 1): Promise<void> => {
    const path = `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${ns}/kustomizations`;
    const count = (): number => double.requests.filter((r) => r.path === path).length;
    const target = count() + more;
    const deadline = Date.now() + 10_000;
    while (count() < target) {
      if (Date.now() > deadline) throw new Error(`the waiter did not list ${ns} ${more} more time(s) within 10 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('resolves once every Kustomization of the source is Ready at the pushed commit, reporting each change', async () => {
    const ns = fresh();
    const source = { ...SOURCE, namespace: ns };
    const ref = { kind: 'GitRepository', name: 'flux-system' };
    double.setKustomization(ns, 'flux-system', { spec: { sourceRef: ref, path: './clusters/eu-1' }, ...readyAt(OLDER) });
    double.setKustomization(ns, 'infrastructure', { spec: { sourceRef: ref, path: './clusters/eu-1/infrastructure' }, ...readyAt(OLDER) });
    // Another repository's Kustomization never reaches our commit, and is not ours to wait for.
    double.setKustomization(ns, 'tenant', {
      spec: { sourceRef: { kind: 'GitRepository', name: 'tenant-repo' } },
      ...status('False', 'ArtifactFailed', 'no artifact'),
    });
    const progress: KustomizationReadiness[] = [];
    const readiness = new KubeFluxReadiness({ kubeConfig, pollIntervalMs: 50 });
    const waiting = readiness.waitForReady({ namespace: ns, source, commit: COMMIT }, { timeoutMs: 5000, onProgress: (s) => progress.push(s) });

    await polled(ns);
    double.setKustomization(ns, 'flux-system', readyAt(COMMIT));
    // The sync applies the new layer in the same reconciliation.
    double.setKustomization(ns, 'apps', {
      spec: { sourceRef: ref, path: './clusters/eu-1/apps' },
      ...status('False', 'DependencyNotReady', "dependency 'flux-system/infrastructure' is not ready"),
    });
    await polled(ns);
    double.setKustomization(ns, 'infrastructure', readyAt(COMMIT));
    await polled(ns);
    double.setKustomization(ns, 'apps', readyAt(COMMIT));

    const final = await waiting;
    assert.deepEqual(
      final.map((s) => [s.name, s.phase]),
      [
        ['apps', 'ready'],
        ['flux-system', 'ready'],
        ['infrastructure', 'ready'],
      ],
    );
    assert.equal(final[0]?.lastAppliedRevision, `main@sha1:${COMMIT}`);
    assert.ok(!progress.some((s) => s.name === 'tenant'), 'another source is not reported');
    const apps = progress.filter((s) => s.name === 'apps').map((s) => s.phase);
    assert.deepEqual(apps, ['progressing', 'ready'], 'each change reported once');
    assert.match(
      progress.find((s) => s.name === 'apps')?.summary ?? '',
      /Ready=False \(DependencyNotReady: dependency 'flux-system\/infrastructure' is not ready\)/,
    );
    const lists = double.requests.filter((r) => r.path === `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${ns}/kustomizations`);
    assert.ok(lists.length >= 2 && lists.every((r) => r.method === 'GET' && r.query['watch'] === undefined), 'polls with lists');
  });

  it('times out naming the Kustomizations that are not Ready and their condition messages', async () => {
    const ns = fresh();
    double.setKustomization(ns, 'flux-system', readyAt(COMMIT));
    double.setKustomization(ns, 'apps', status('False', 'HealthCheckFailed', "timeout waiting for: [Deployment/tcr/web status: 'InProgress']", OLDER, COMMIT));
    const readiness = new KubeFluxReadiness({ kubeConfig, pollIntervalMs: 50 });
    const started = Date.now();
    await assert.rejects(
      readiness.waitForReady({ namespace: ns, source: { ...SOURCE, namespace: ns }, commit: COMMIT }, { timeoutMs: 400 }),
      (error: unknown) => {
        assert.ok(error instanceof TimeoutError);
        assert.match(error.message, /^Flux did not apply a1afe267b54f within 0\.4s; not Ready: /);
        assert.match(
          error.message,
          new RegExp(
            `${ns}/apps \\(Ready=False \\(HealthCheckFailed: timeout waiting for: \\[Deployment/tcr/web status: 'InProgress'\\]\\), applied main@sha1:${OLDER}\\)`,
          ),
        );
        assert.doesNotMatch(error.message, /flux-system \(/, 'the Ready one is not named');
        return true;
      },
    );
    assert.ok(Date.now() - started < 2000);
  });

  it('times out saying so when no Kustomization applies the source', async () => {
    const ns = fresh();
    const readiness = new KubeFluxReadiness({ kubeConfig, pollIntervalMs: 50 });
    await assert.rejects(
      readiness.waitForReady({ namespace: ns, source: { ...SOURCE, namespace: ns }, commit: COMMIT }, { timeoutMs: 200 }),
      new RegExp(`no Kustomization in ${ns} applies GitRepository ${ns}/flux-system`),
    );
  });

  it('fails early when a Kustomization fails to build the pushed commit', async () => {
    const ns = fresh();
    double.setKustomization(ns, 'flux-system', readyAt(COMMIT));
    double.setKustomization(
      ns,
      'database',
      status('False', 'BuildFailed', 'kustomize build failed: accumulating resources: missing.yaml: no such file', OLDER, COMMIT),
    );
    const readiness = new KubeFluxReadiness({ kubeConfig, pollIntervalMs: 50 });
    const started = Date.now();
    await assert.rejects(
      readiness.waitForReady({ namespace: ns, source: { ...SOURCE, namespace: ns }, commit: COMMIT }, { timeoutMs: 10_000 }),
      (error: unknown) => {
        assert.ok(error instanceof VerificationError);
        assert.deepEqual(error.findings, [
          `Kustomization ${ns}/database failed: Ready=False (BuildFailed: kustomize build failed: accumulating resources: missing.yaml: no such file), applied main@sha1:${OLDER}`,
        ]);
        return true;
      },
    );
    assert.ok(Date.now() - started < 5000, 'did not wait for the timeout');
  });

  it('keeps waiting through a failure of an older revision, which the pushed commit may fix', async () => {
    const ns = fresh();
    double.setKustomization(ns, 'flux-system', status('False', 'BuildFailed', 'kustomize build failed', OLDER));
    const readiness = new KubeFluxReadiness({ kubeConfig, pollIntervalMs: 50 });
    const waiting = readiness.waitForReady({ namespace: ns, source: { ...SOURCE, namespace: ns }, commit: COMMIT }, { timeoutMs: 5000 });
    // Seen failing twice, and still waiting: the failure of an older revision did not end the wait.
    await polled(ns, 2);
    double.setKustomization(ns, 'flux-system', readyAt(COMMIT));
    assert.equal((await waiting).length, 1);
  });

  it('counts a later commit that contains the pushed one, asking once per commit, and not one that does not', async () => {
    const ns = fresh();
    const LATER = 'f'.repeat(40);
    double.setKustomization(ns, 'flux-system', readyAt(LATER));
    double.setKustomization(ns, 'apps', readyAt(OLDER));
    const asked: string[] = [];
    const readiness = new KubeFluxReadiness({ kubeConfig, pollIntervalMs: 50 });
    const waiting = readiness.waitForReady(
      { namespace: ns, source: { ...SOURCE, namespace: ns }, commit: COMMIT, contains: async (other) => (asked.push(other), other === LATER) },
      { timeoutMs: 5000 },
    );
    // apps at an older commit has been seen (and flux-system's LATER asked about) before apps moves.
    await polled(ns, 2);
    double.setKustomization(ns, 'apps', readyAt(LATER));
    const final = await waiting;
    assert.deepEqual(
      final.map((s) => s.phase),
      ['ready', 'ready'],
    );
    assert.deepEqual(asked.sort(), [OLDER, LATER].sort(), 'each other commit asked about once');
  });

  it('stops when its signal aborts', async () => {
    const ns = fresh();
    const readiness = new KubeFluxReadiness({ kubeConfig, pollIntervalMs: 50 });
    const stop = new AbortController();
    const waiting = readiness.waitForReady({ namespace: ns, source: { ...SOURCE, namespace: ns }, commit: COMMIT }, { timeoutMs: 10_000, signal: stop.signal });
    // Aborted while it is really waiting (after its first list), not before it started.
    await polled(ns);
    stop.abort(new Error('cancelled'));
    await assert.rejects(waiting, /cancelled/);
  });
});
