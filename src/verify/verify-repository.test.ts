import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { ValidationError } from '../errors.js';
import { createVerifyFixture, type VerifyFixture } from '../../test/support/verify-fixture.js';
import { SchemaValidator } from './schema-validator.js';
import type { KustomizeBuilder } from './kustomize-builder.js';
import { formatFinding, verifyRepository, type VerifyReport } from './verify-repository.js';

// Real kubectl kustomize, real CRD schemas, real client-node metadata; one
// validator for the whole file so schemas are loaded and compiled once.
const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
const kubectl = new KubectlKustomize();
const fixtures: VerifyFixture[] = [];
after(async () => {
  await Promise.all(fixtures.map((f) => f.cleanup()));
});

/** Counts builds per directory, to prove each distinct path is built once. */
function countingBuilder(counts: Map<string, number>): KustomizeBuilder {
  return {
    build(repoRoot, dir, signal) {
      counts.set(dir, (counts.get(dir) ?? 0) + 1);
      return kubectl.build(repoRoot, dir, signal);
    },
  };
}

async function fixture(): Promise<VerifyFixture> {
  const f = await createVerifyFixture();
  fixtures.push(f);
  return f;
}

async function verify(f: VerifyFixture, options: { cluster?: string; builder?: KustomizeBuilder } = {}): Promise<VerifyReport> {
  return verifyRepository(
    { reader: new FsRepoReader(f.root), builder: options.builder ?? kubectl, validator, repoRoot: f.root },
    options.cluster !== undefined ? { cluster: options.cluster } : {},
  );
}

/** Breaks a fresh copy, verifies it, and returns the finding lines. */
async function findingsAfter(breakIt: (f: VerifyFixture) => Promise<void>): Promise<{ lines: string[]; report: VerifyReport }> {
  const f = await fixture();
  await breakIt(f);
  const report = await verify(f);
  return { lines: report.findings.map(formatFinding), report };
}

const APPS = 'clusters/demo/flux/apps.yaml: Kustomization flux-system/apps';
const INFRA = 'clusters/demo/flux/infrastructure.yaml: Kustomization flux-system/infrastructure';
const LATE_SEALED_SECRET =
  'clusters/demo/apps: SealedSecret tcr/registry-pull-secret: bitnami.com/SealedSecret does not exist yet when Kustomization flux-system/apps applies it: add dependsOn flux-system/infrastructure (which installs it) to Kustomization flux-system/apps';

// Each test owns its fixture copy; the shared validator's lazy loading is safe under concurrency.
describe('verifyRepository', { concurrency: 4 }, () => {
  it('passes the valid fixture with the summary line, building each distinct path once', async () => {
    const f = await fixture();
    const counts = new Map<string, number>();
    const report = await verify(f, { builder: countingBuilder(counts) });
    assert.deepEqual(report.findings.map(formatFinding), []);
    assert.equal(report.kustomizationsChecked, 2);
    assert.equal(report.summary, '2 Flux Kustomization(s) checked; substitution wiring is consistent');
    assert.deepEqual(report.notes, []);
    assert.deepEqual([...counts].sort(), [
      ['clusters/demo', 1],
      ['clusters/demo/apps', 1],
      ['clusters/demo/infrastructure', 1],
    ]);
    // The same tree, asked for by cluster name, gives the same verdict.
    assert.equal((await verify(f, { cluster: 'demo' })).summary, report.summary);
  });

  it('checks every cluster when none is named, still building each distinct path once', async () => {
    const f = await fixture();
    // A second cluster reusing demo's overlays: its own root, same layer paths.
    await f.write('clusters/staging/kustomization.yaml', 'resources:\n  - flux\n');
    await f.write('clusters/staging/flux/kustomization.yaml', 'resources:\n  - ../../demo/flux\n');
    const counts = new Map<string, number>();
    const all = await verify(f, { builder: countingBuilder(counts) });
    assert.equal(all.summary, '4 Flux Kustomization(s) checked; substitution wiring is consistent');
    assert.deepEqual([...counts].sort(), [
      ['clusters/demo', 1],
      ['clusters/demo/apps', 1],
      ['clusters/demo/infrastructure', 1],
      ['clusters/staging', 1],
    ]);
    assert.equal((await verify(f, { cluster: 'staging' })).kustomizationsChecked, 2);
  });

  it('formats a finding as one line, leaving out what is unknown', () => {
    assert.equal(
      formatFinding({ file: 'clusters/x/flux/apps.yaml', object: 'Kustomization flux-system/apps', message: 'dependsOn flux-system/infra does not exist' }),
      'clusters/x/flux/apps.yaml: Kustomization flux-system/apps: dependsOn flux-system/infra does not exist',
    );
    assert.equal(formatFinding({ file: 'clusters', message: 'no cluster directories' }), 'clusters: no cluster directories');
  });

  it('reports a spec.path that does not exist', async () => {
    const { lines, report } = await findingsAfter((f) =>
      f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('./clusters/demo/apps', './clusters/demo/applications')),
    );
    assert.deepEqual(lines, [`${APPS}: spec.path ./clusters/demo/applications does not exist`]);
    assert.equal(report.summary, '2 Flux Kustomization(s) checked; 1 finding(s)');
  });

  it('reports a spec.path that escapes the repository', async () => {
    const { lines } = await findingsAfter((f) => f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('./clusters/demo/apps', './../outside')));
    assert.deepEqual(lines, [`${APPS}: spec.path: "../outside" escapes the repository`]);
  });

  it("reports a path that does not build, with kustomize's own error", async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('clusters/demo/apps/kustomization.yaml', (t) => t.replace('  - sealed\n', '  - sealed\n  - missing-service.yaml\n')),
    );
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(
      lines[0]!,
      /^clusters\/demo\/flux\/apps\.yaml: Kustomization flux-system\/apps: spec\.path \.\/clusters\/demo\/apps does not build: .*missing-service\.yaml/,
    );
    assert.doesNotMatch(lines[0]!, /\/tmp\//, 'kustomize paths are made repository-relative');
  });

  it('reports a dependsOn target that does not exist', async () => {
    const { lines } = await findingsAfter((f) => f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('- name: infrastructure', '- name: infra')));
    // Without its dependency, apps would also apply its SealedSecret before the controller's CRD exists.
    assert.deepEqual(lines, [LATE_SEALED_SECRET, `${APPS}: dependsOn flux-system/infra does not exist`]);
  });

  it('reports a dependsOn cycle once, naming the whole loop', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('clusters/demo/flux/infrastructure.yaml', (t) => t.replace('spec:\n', 'spec:\n  dependsOn:\n    - name: apps\n')),
    );
    assert.deepEqual(lines, [
      'clusters/demo/flux/apps.yaml: Kustomization flux-system/apps: dependsOn cycle: flux-system/apps -> flux-system/infrastructure -> flux-system/apps',
    ]);
  });

  it('reports a ${var} that postBuild does not define', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('clusters/demo/apps/kustomization.yaml', (t) => t.replace('value: https://web.${cluster_domain}', 'value: https://web.${cluster_domian}')),
    );
    assert.deepEqual(lines, [
      `${APPS}: \${cluster_domian} (used by Deployment tcr/web) is not defined by postBuild.substitute, ConfigMap flux-system/cluster-config: Flux 2.9+ fails the reconcile (strict substitution)`,
    ]);
  });

  it('accepts a ${var:=default} without a definition and a var defined inline by postBuild.substitute', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('clusters/demo/apps/kustomization.yaml', (t) =>
        t.replace('value: https://web.${cluster_domain}', 'value: https://${web_host:=web}.${cluster_domain}/${tenant}'),
      );
      await f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('  postBuild:\n', '  postBuild:\n    substitute:\n      tenant: tcr\n'));
    });
    assert.deepEqual(lines, []);
  });

  it('reports variables rendered by a Kustomization without postBuild', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('clusters/demo/flux/infrastructure.yaml', (t) =>
        t.replace('  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-config\n', ''),
      ),
    );
    assert.deepEqual(lines, [`${INFRA}: output uses \${cluster_domain} but spec.postBuild is not set: Flux would apply the literal text`]);
  });

  it('reports a substituteFrom ConfigMap missing from the repository', async () => {
    const { lines } = await findingsAfter((f) => f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('name: cluster-config', 'name: cluster-settings')));
    assert.ok(
      lines.includes(`${APPS}: postBuild.substituteFrom ConfigMap flux-system/cluster-settings does not exist in the repository (and is not optional)`),
      lines.join('\n'),
    );
  });

  it('notes (and does not fail) a variable only a Secret source can supply', async () => {
    const { lines, report } = await findingsAfter(async (f) => {
      await f.edit('clusters/demo/flux/apps.yaml', (t) =>
        t.replace(
          '        name: cluster-config\n',
          '        name: cluster-config\n      - kind: Secret\n        name: cluster-secrets\n      - kind: ConfigMap\n        name: optional-overrides\n        optional: true\n',
        ),
      );
      await f.edit('clusters/demo/apps/kustomization.yaml', (t) =>
        t.replace('value: https://web.${cluster_domain}', 'value: https://${db_user}@web.${cluster_domain}'),
      );
    });
    assert.deepEqual(lines, []);
    assert.equal(report.summary, '2 Flux Kustomization(s) checked; substitution wiring is consistent');
    assert.deepEqual(report.notes, [
      `${APPS}: \${db_user} (used by Deployment tcr/web) may come from Secret flux-system/cluster-secrets, whose keys cannot be checked offline`,
    ]);
  });

  it('catches a typo field (dependOn) by strict schema validation', async () => {
    const { lines } = await findingsAfter((f) => f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('dependsOn:', 'dependOn:')));
    assert.deepEqual(lines, [LATE_SEALED_SECRET, `${APPS}: spec.dependOn: unknown field (did you mean dependsOn?)`]);
  });

  it('reports a bad duration and a wrong type', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('interval: 10m', 'interval: 10 minutes').replace('prune: true', 'prune: "yes"'));
    });
    assert.deepEqual(lines, [
      `${APPS}: spec.interval: "10 minutes" is not a duration (Go syntax such as 30s, 5m, 1h30m)`,
      `${APPS}: spec.prune: must be boolean (got string "yes")`,
    ]);
  });

  it('reports a beta Flux API version', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('base/infrastructure/helmrepository.yaml', (t) => t.replace('source.toolkit.fluxcd.io/v1', 'source.toolkit.fluxcd.io/v1beta2')),
    );
    assert.deepEqual(lines, [
      'clusters/demo/infrastructure: HelmRepository ingress-nginx/ingress-nginx: apiVersion: source.toolkit.fluxcd.io/v1beta2 is not served by Flux 2.8+ (GA APIs only): use source.toolkit.fluxcd.io/v1',
    ]);
  });

  it('reports a HelmRelease with both chart and chartRef', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('base/infrastructure/helmrelease.yaml', (t) =>
        t.replace('  install:\n', '  chartRef:\n    kind: OCIRepository\n    name: ingress-nginx\n  install:\n'),
      ),
    );
    assert.deepEqual(lines, [
      'clusters/demo/infrastructure: HelmRelease ingress-nginx/ingress-nginx: spec: exactly one of chart or chartRef must be set (both are)',
    ]);
  });

  it('reports an unknown field on a core kind (Deployment spec.replica)', async () => {
    const { lines } = await findingsAfter((f) => f.edit('base/apps/web/deployment.yaml', (t) => t.replace('replicas: 2', 'replica: 2')));
    assert.deepEqual(lines, ['clusters/demo/apps: Deployment tcr/web: spec.replica: unknown field (did you mean replicas?)']);
  });

  it('reports an overlay patch whose target the renamed base object no longer matches (kustomize skips it silently)', async () => {
    // A JSON6902 patch with a target that selects nothing builds without an error: only verify says so.
    const { lines } = await findingsAfter((f) => f.edit('base/apps/web/deployment.yaml', (t) => t.replace('name: web\n', 'name: web-server\n')));
    assert.deepEqual(lines, [
      'clusters/demo/apps/kustomization.yaml: patch patches[1] (inline) targets Deployment web, which clusters/demo/apps does not build: kustomize skips a patch whose target selects nothing, without an error',
    ]);
  });

  it('validates what Flux applies: a substituted integer is an integer', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('base/apps/web/deployment.yaml', (t) => t.replace('replicas: 2', 'replicas: ${web_replicas}'));
      await f.edit('clusters/demo/flux/cluster-config.yaml', (t) => `${t}  web_replicas: "3"\n`);
    });
    assert.deepEqual(lines, []);
  });

  it('reports a plaintext Secret anywhere under clusters/', async () => {
    const { lines } = await findingsAfter((f) =>
      f.write(
        'clusters/demo/apps/sealed/debug-notes.yaml',
        '# not listed in any kustomization, still committed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: database\nstringData:\n  password: hunter2\n',
      ),
    );
    assert.deepEqual(lines, [
      'clusters/demo/apps/sealed/debug-notes.yaml: Secret database/db: plaintext credential in Git: a Secret with data or stringData (commit a SealedSecret instead)',
    ]);
  });

  it('reports an unquoted true SealedSecret scope annotation (which kustomize would quote)', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('clusters/demo/apps/sealed/registry-pull-secret.yaml', (t) =>
        t.replace('  namespace: tcr\nspec:', '  namespace: tcr\n  annotations:\n    sealedsecrets.bitnami.com/namespace-wide: true\nspec:'),
      ),
    );
    assert.deepEqual(lines, [
      'clusters/demo/apps/sealed/registry-pull-secret.yaml: SealedSecret tcr/registry-pull-secret: metadata.annotations["sealedsecrets.bitnami.com/namespace-wide"] must be the string "true" (got boolean true); the controller accepts nothing else',
    ]);
  });

  it('reports missing prune and interval, and missing health gating', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('clusters/demo/flux/apps.yaml', (t) => t.replace('  interval: 10m\n', '').replace('  prune: true\n', '').replace('  wait: true\n', '')),
    );
    assert.deepEqual(lines, [
      `${APPS}: neither spec.healthChecks nor spec.wait: true is set: "applied" would not mean "ready" before dependents start`,
      `${APPS}: spec.prune, spec.interval not set: every Kustomization sets prune, interval, retryInterval and timeout`,
    ]);
  });

  it('reports a Flux Kustomization file the cluster build does not include', async () => {
    const { lines, report } = await findingsAfter((f) =>
      f.write(
        'clusters/demo/flux/monitoring.yaml',
        '' +
          'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: monitoring\n  namespace: flux-system\n' +
          'spec:\n  interval: 10m\n  retryInterval: 1m\n  timeout: 5m\n  prune: true\n  wait: true\n' +
          '  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: ./clusters/demo/apps\n' +
          '  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-config\n',
      ),
    );
    assert.deepEqual(lines, [
      'clusters/demo/flux/monitoring.yaml: Kustomization flux-system/monitoring: is in no build of clusters/demo: Flux never applies it',
    ]);
    assert.equal(report.kustomizationsChecked, 3);
  });

  it('reports a cluster that does not build, and an unknown cluster', async () => {
    const f = await fixture();
    await f.edit('clusters/demo/kustomization.yaml', (t) => t.replace('- flux', '- missing'));
    const lines = (await verify(f)).findings.map(formatFinding);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /^clusters\/demo: does not build: .*missing/);
    assert.deepEqual((await verify(f, { cluster: 'nope' })).findings.map(formatFinding), ['clusters/nope: no such cluster directory']);
    await assert.rejects(verify(f, { cluster: '../demo' }), ValidationError);
  });

  it('reports each layer a cluster path without an entry point applies twice (Flux generates one taking in every overlay)', async () => {
    const f = await fixture();
    await f.remove('clusters/demo/kustomization.yaml');
    const lines = (await verify(f)).findings.map(formatFinding);
    assert.deepEqual(lines, [
      ...['apps', 'infrastructure'].map(
        (layer) =>
          `clusters/demo/flux/${layer}.yaml: Kustomization flux-system/${layer}: clusters/demo/${layer} is applied twice: clusters/demo has no kustomization file, so Flux's sync of it takes in every directory with one, this path included; give clusters/demo a kustomization.yaml listing only what the sync applies`,
      ),
      // The sync then applies the SealedSecret too, before any layer installed its controller.
      'clusters/demo: SealedSecret tcr/registry-pull-secret: bitnami.com/SealedSecret is a custom resource in the root sync, which applies before any layer (its CRD comes from Kustomization flux-system/infrastructure): its dry run fails and no layer is ever created. Move it into a layer that depends on flux-system/infrastructure',
    ]);
  });

  it('notes, rather than fails, a path inside an ExternalArtifact (an ArtifactGenerator relocates the repository into it)', async () => {
    const { lines, report } = await findingsAfter(async (f) => {
      await f.edit('clusters/demo/flux/apps.yaml', (t) =>
        t.replace('    kind: GitRepository\n    name: flux-system\n  path: ./clusters/demo/apps', '    kind: ExternalArtifact\n    name: apps\n  path: ./demo'),
      );
    });
    assert.deepEqual(lines, []);
    assert.ok(
      report.notes.includes(
        `${APPS}: spec.path ./demo is inside ExternalArtifact flux-system/apps, which another controller assembles: not built or checked here`,
      ),
      report.notes.join('\n'),
    );
  });

  it('notes objects of kinds it has no schema for instead of failing them', async () => {
    const { lines, report } = await findingsAfter(async (f) => {
      await f.write('base/apps/web/policy.yaml', 'apiVersion: kyverno.io/v1\nkind: Policy\nmetadata:\n  name: web\nspec:\n  rules: []\n');
      await f.edit('base/apps/web/kustomization.yaml', (t) => `${t}  - policy.yaml\n`);
      // The platform says its clusters come with Kyverno's CRDs.
      await f.edit('scaffold.yaml', (t) => `${t}provided:\n  crds: [kyverno.io/Policy]\n`);
    });
    assert.deepEqual(lines, []);
    assert.deepEqual(report.notes, ['no schema for kyverno.io/v1 Policy: 1 object(s) not validated (first: Policy tcr/web in clusters/demo/apps)']);
  });
});
