/**
 * One test per apply-order check, each on the verify fixture broken on
 * purpose: what Flux would do on a fresh cluster, as a finding naming the
 * file, the object and the fix.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { createVerifyFixture, type VerifyFixture } from '../../test/support/verify-fixture.js';
import { SchemaValidator } from './schema-validator.js';
import { formatFinding, verifyRepository, type VerifyReport } from './verify-repository.js';

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
const kubectl = new KubectlKustomize();
const fixtures: VerifyFixture[] = [];
after(async () => {
  await Promise.all(fixtures.map((f) => f.cleanup()));
});

async function findingsAfter(
  breakIt: (f: VerifyFixture) => Promise<void>,
  options: { targetFlux?: string } = {},
): Promise<{ lines: string[]; report: VerifyReport }> {
  const f = await createVerifyFixture();
  fixtures.push(f);
  await breakIt(f);
  const report = await verifyRepository({ reader: new FsRepoReader(f.root), builder: kubectl, validator, repoRoot: f.root }, options);
  return { lines: report.findings.map(formatFinding), report };
}

const APPS = 'clusters/demo/flux/apps.yaml: Kustomization flux-system/apps';
const INFRA = 'clusters/demo/flux/infrastructure.yaml: Kustomization flux-system/infrastructure';

/** Adds a document to the web Deployment's directory. */
async function addToWeb(f: VerifyFixture, name: string, yaml: string): Promise<void> {
  await f.write(`base/apps/web/${name}`, yaml);
  await f.edit('base/apps/web/kustomization.yaml', (t) => `${t}  - ${name}\n`);
}

describe('verify simulates Flux apply order', { concurrency: 4 }, () => {
  it('fails a custom resource in the root sync, which applies before any layer installs its CRD', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('clusters/demo/apps/kustomization.yaml', (t) => t.replace('  - sealed\n', ''));
      await f.edit('clusters/demo/flux/kustomization.yaml', (t) => `${t}  - ../apps/sealed\n`);
    });
    assert.deepEqual(lines, [
      'clusters/demo: SealedSecret tcr/registry-pull-secret: bitnami.com/SealedSecret is a custom resource in the root sync, which applies before any layer (its CRD comes from Kustomization flux-system/infrastructure): its dry run fails and no layer is ever created. Move it into a layer that depends on flux-system/infrastructure',
    ]);
  });

  it('fails a custom resource applied by the Kustomization releasing the chart of its CRD, and one nothing installs', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.write(
        'base/infrastructure/issuer.yaml',
        'apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: selfsigned\nspec:\n  selfSigned: {}\n',
      );
      await f.write(
        'base/infrastructure/sealed.yaml',
        'apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: early\n  namespace: kube-system\nspec:\n  encryptedData:\n    a: AgBy3i4OJSWK\n',
      );
      await f.edit('base/infrastructure/kustomization.yaml', (t) => `${t}  - issuer.yaml\n  - sealed.yaml\n`);
    });
    assert.deepEqual(lines, [
      'clusters/demo/infrastructure: ClusterIssuer selfsigned: cert-manager.io/ClusterIssuer does not exist yet when Kustomization flux-system/infrastructure applies it: no Kustomization of clusters/demo installs it: add its CRD to a layer flux-system/infrastructure depends on, declare the chart that installs it in scaffold.yaml charts, or list it in scaffold.yaml provided.crds',
      'clusters/demo/infrastructure: SealedSecret kube-system/early: bitnami.com/SealedSecret does not exist yet when Kustomization flux-system/infrastructure applies it: its CRD comes from HelmRelease kube-system/sealed-secrets in the same Kustomization, installed only after the dry run of everything it applies: move SealedSecret kube-system/early into a Kustomization that depends on flux-system/infrastructure',
    ]);
  });

  it('accepts a CRD the same Kustomization applies, and notes (not fails) kinds undeclared charts may install', async () => {
    const { lines, report } = await findingsAfter(async (f) => {
      await f.write(
        'base/apps/web/crd.yaml',
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names: { kind: Widget, plural: widgets, singular: widget, listKind: WidgetList }\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: one\n',
      );
      await f.edit('base/apps/web/kustomization.yaml', (t) => `${t}  - crd.yaml\n`);
      // Without charts in scaffold.yaml, what a chart installs is unknown.
      await f.write('scaffold.yaml', 'apiVersion: gitops-scaffolder.io/v1alpha1\nkind: Platform\n');
    });
    assert.deepEqual(lines, []);
    assert.ok(
      report.notes.includes(
        "clusters/demo/flux/apps.yaml: Kustomization flux-system/apps: bitnami.com/SealedSecret (SealedSecret tcr/registry-pull-secret) has no CRD in the tree; it may come from HelmRelease ingress-nginx/ingress-nginx (chart ingress-nginx), HelmRelease kube-system/sealed-secrets (chart sealed-secrets): declare the charts' CRDs in scaffold.yaml charts to check it",
      ),
      report.notes.join('\n'),
    );
  });

  it('notes a HelmRelease whose chart scaffold.yaml does not declare, once charts are declared', async () => {
    const { lines, report } = await findingsAfter((f) => f.edit('scaffold.yaml', (t) => t.replace('  - chart: ingress-nginx\n', '')));
    assert.deepEqual(lines, []);
    assert.ok(
      report.notes.includes(
        'clusters/demo/infrastructure: HelmRelease ingress-nginx/ingress-nginx: chart ingress-nginx is not in scaffold.yaml charts, so verify assumes it installs no CRD and creates no Service it knows of',
      ),
      report.notes.join('\n'),
    );
  });

  it('fails a healthCheck naming an object the Kustomization does not build', async () => {
    const { lines } = await findingsAfter((f) =>
      f.edit('clusters/demo/flux/infrastructure.yaml', (t) =>
        t.replace('name: sealed-secrets\n      namespace: kube-system', 'name: sealed-secrets\n      namespace: sealed-secrets'),
      ),
    );
    assert.deepEqual(lines, [
      // The check no longer names the release, so nothing makes infrastructure wait for the SealedSecret CRD.
      'clusters/demo/apps: SealedSecret tcr/registry-pull-secret: bitnami.com/SealedSecret does not exist yet when Kustomization flux-system/apps applies it: its CRD comes from HelmRelease kube-system/sealed-secrets in Kustomization flux-system/infrastructure, which does not wait for it (no spec.wait: true, no healthCheck on it), so flux-system/apps starts once flux-system/infrastructure is applied, before the chart has installed the CRD, and its first reconciles fail. Add a healthCheck on HelmRelease kube-system/sealed-secrets (or spec.wait: true) to Kustomization flux-system/infrastructure',
      `${INFRA}: spec.healthChecks[1] waits for HelmRelease sealed-secrets/sealed-secrets, which clusters/demo/infrastructure does not build: the Kustomization never becomes Ready. Name an object it applies (its HelmReleases: ingress-nginx/ingress-nginx, kube-system/sealed-secrets), or move the check to the Kustomization that applies it`,
    ]);
  });

  it('fails Secret and ConfigMap references nothing in the tree creates in that namespace, and accepts sealed and provided ones', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('base/apps/web/deployment.yaml', (t) =>
        t
          .replace(
            '    spec:\n      containers:',
            '    spec:\n      imagePullSecrets:\n        - name: registry-pull-secret\n      volumes:\n        - name: config\n          configMap:\n            name: web-settings\n        - name: ca\n          secret:\n            secretName: corporate-ca\n      containers:',
          )
          .replace(
            '          env:\n',
            '          envFrom:\n            - secretRef:\n                name: web-env\n            - configMapRef:\n                name: maybe\n                optional: true\n          env:\n            - name: TOKEN\n              valueFrom:\n                secretKeyRef:\n                  name: cluster-config\n                  key: token\n',
          ),
      );
      await f.edit('scaffold.yaml', (t) => `${t}provided:\n  secrets: [tcr/corporate-ca]\n`);
    });
    const web = 'clusters/demo/apps: Deployment tcr/web: spec.template.spec';
    assert.deepEqual(lines, [
      `${web}.containers[0].envFrom[0].secretRef: Secret tcr/web-env does not exist in the cluster's tree: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.secrets`,
      `${web}.containers[0].env[0].valueFrom.secretKeyRef: Secret tcr/cluster-config does not exist in the cluster's tree: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.secrets`,
      `${web}.volumes[0].configMap: ConfigMap tcr/web-settings does not exist in the cluster's tree: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.configMaps`,
    ]);
  });

  it('accepts a missing pull secret only the caller supplies, as an imagePullSecrets entry alone (the kubelet then pulls anonymously)', async () => {
    const { lines } = await findingsAfter(async (f) => {
      // Rendered without --registry-auth: no pull secret in the tree.
      await f.edit('clusters/demo/apps/sealed/kustomization.yaml', (t) => t.replace('resources:\n  - registry-pull-secret.yaml\n', 'resources: []\n'));
      await f.edit('base/apps/web/deployment.yaml', (t) =>
        t.replace(
          '    spec:\n      containers:',
          '    spec:\n      imagePullSecrets:\n        - name: registry-pull-secret\n        - name: other-pull\n      volumes:\n        - name: auth\n          secret:\n            secretName: registry-pull-secret\n      containers:',
        ),
      );
      await f.edit(
        'scaffold.yaml',
        (t) =>
          `${t}credentials:\n  - name: registry-pull-secret\n    namespace: tcr\n    layer: apps\n    type: kubernetes.io/dockerconfigjson\n    keys:\n      .dockerconfigjson: { supplied: registry-auth, registry: ghcr.io }\n`,
      );
    });
    const web = 'clusters/demo/apps: Deployment tcr/web: spec.template.spec';
    assert.deepEqual(lines, [
      `${web}.imagePullSecrets[1]: Secret tcr/other-pull does not exist in the cluster's tree: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.secrets`,
      `${web}.volumes[0].secret: Secret tcr/registry-pull-secret does not exist in the cluster's tree: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.secrets`,
    ]);
  });

  it('names the namespace that has the object when a Pod reads another one', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('base/apps/web/deployment.yaml', (t) =>
        t.replace(
          '    spec:\n      containers:',
          '    spec:\n      volumes:\n        - name: settings\n          configMap:\n            name: cluster-config\n      containers:',
        ),
      );
    });
    assert.deepEqual(lines, [
      "clusters/demo/apps: Deployment tcr/web: spec.template.spec.volumes[0].configMap: ConfigMap tcr/cluster-config does not exist in the cluster's tree (only flux-system/cluster-config: a Pod reads its own namespace only): add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.configMaps",
    ]);
  });

  it('fails a ServiceMonitor port the selected Service does not name, including one in kube-prometheus-stack values', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await addToWeb(
        f,
        'monitor.yaml',
        'apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: web\n  endpoints:\n    - port: metrics\n',
      );
      await f.edit('base/apps/web/service.yaml', (t) =>
        t.replace('metadata:\n  name: web\n', 'metadata:\n  name: web\n  labels:\n    app.kubernetes.io/name: web\n'),
      );
      await f.edit('base/infrastructure/helmrelease.yaml', (t) =>
        t.replace(
          '  values:\n',
          '  values:\n    prometheus:\n      additionalServiceMonitors:\n        - name: sealed-secrets\n          namespaceSelector: { matchNames: [kube-system] }\n          selector: { matchLabels: { app.kubernetes.io/name: sealed-secrets } }\n          endpoints:\n            - port: tcp-metrics\n',
        ),
      );
      await f.edit(
        'scaffold.yaml',
        (t) =>
          t.replace(
            'crds: [bitnami.com/SealedSecret]',
            'crds: [bitnami.com/SealedSecret]\n    services:\n      - name: "{release}-metrics"\n        labels: { app.kubernetes.io/name: sealed-secrets }\n        ports: [http-metrics]',
          ) + 'provided:\n  crds: [monitoring.coreos.com/ServiceMonitor]\n',
      );
    });
    assert.deepEqual(lines, [
      'clusters/demo/apps: ServiceMonitor tcr/web: endpoints[0].port "metrics" is not a port of the Services it selects ("http"): nothing is scraped. Use one of those names',
      'clusters/demo/infrastructure: HelmRelease ingress-nginx/ingress-nginx values.prometheus.additionalServiceMonitors[0] (ServiceMonitor sealed-secrets): endpoints[0].port "tcp-metrics" is not a port of the Services it selects ("http-metrics"): nothing is scraped. Use one of those names',
    ]);
  });

  it('fails an in-cluster host nothing serves, and one served by a Kustomization its client does not depend on', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('base/apps/web/deployment.yaml', (t) =>
        t.replace(
          '              value: https://web.base.invalid\n',
          '              value: https://web.base.invalid\n            - name: DATABASE_HOST\n              value: mysql-haproxy.data.svc\n',
        ),
      );
      await f.edit('base/infrastructure/helmrelease.yaml', (t) =>
        t.replace('      replicaCount: 2\n', '      replicaCount: 2\n      defaultBackend: http://web.tcr.svc.cluster.local\n'),
      );
    });
    assert.deepEqual(lines, [
      "clusters/demo/apps: Deployment tcr/web: mysql-haproxy.data.svc names Service data/mysql-haproxy, which nothing in the cluster's tree creates: it resolves to nothing on this cluster. Point it at a cluster-config variable (e.g. a managed service's endpoint per provider), or add the layer that runs it",
      'clusters/demo/infrastructure: HelmRelease ingress-nginx/ingress-nginx: web.tcr.svc.cluster.local is Service tcr/web, applied by Kustomization flux-system/apps, which Kustomization flux-system/infrastructure does not depend on: it would start against nothing. Add dependsOn flux-system/apps to Kustomization flux-system/infrastructure',
    ]);
  });

  it('fails a bootstrap layer that is not first, a layer that does not wait for it, and a CNI released after it', async () => {
    const { lines } = await findingsAfter(async (f) => {
      await f.edit('scaffold.yaml', (t) => `${t}bootstrap:\n  layer: apps\n  cni: [ingress-nginx]\n  crds: [gateway.networking.k8s.io/Gateway]\n`);
    });
    assert.deepEqual(lines, [
      `${APPS}: does not install gateway.networking.k8s.io/Gateway, which scaffold.yaml bootstrap.crds says every layer may need: add its CustomResourceDefinition to clusters/demo/apps, or apply the chart or artifact installing it there (declared in scaffold.yaml charts or artifacts)`,
      `${APPS}: is the bootstrap layer but depends on flux-system/infrastructure: it must come first in the DAG. Remove its dependsOn`,
      `${INFRA}: does not wait for the bootstrap layer flux-system/apps: on a fresh cluster it runs before the CNI and the CRDs it needs. Add dependsOn flux-system/apps (or on a layer that depends on it)`,
      'clusters/demo/infrastructure: HelmRelease ingress-nginx/ingress-nginx: releases the CNI chart ingress-nginx from Kustomization flux-system/infrastructure, after the bootstrap layer: no node is Ready until it runs, so nothing before it can start. Move it into clusters/demo/apps (bootstrap layer flux-system/apps)',
    ]);
  });

  it('fails a cluster without the bootstrap layer scaffold.yaml declares', async () => {
    const { lines } = await findingsAfter((f) => f.edit('scaffold.yaml', (t) => `${t}bootstrap:\n  layer: bootstrap\n`));
    assert.deepEqual(lines, [
      'clusters/demo: scaffold.yaml bootstrap.layer bootstrap is not a Kustomization of this cluster: nothing installs the CNI and CRDs every layer needs first. Add the layer (render it from the catalog) or fix bootstrap.layer',
    ]);
  });

  it('words an undefined variable by the target Flux version: 2.9 fails the reconcile, 2.8 substitutes an empty string', async () => {
    const typo = (f: VerifyFixture) =>
      f.edit('clusters/demo/apps/kustomization.yaml', (t) => t.replace('value: https://web.${cluster_domain}', 'value: https://web.${cluster_domian}'));
    const strict = await findingsAfter(typo);
    assert.deepEqual(strict.lines, [
      `${APPS}: \${cluster_domian} (used by Deployment tcr/web) is not defined by postBuild.substitute, ConfigMap flux-system/cluster-config: Flux 2.9+ fails the reconcile (strict substitution)`,
    ]);
    const old = await findingsAfter(typo, { targetFlux: '2.8' });
    assert.deepEqual(old.lines, [
      `${APPS}: \${cluster_domian} (used by Deployment tcr/web) is not defined by postBuild.substitute, ConfigMap flux-system/cluster-config: Flux 2.8 substitutes an empty string`,
    ]);
    const fromDescriptor = await findingsAfter(async (f) => {
      await typo(f);
      await f.edit('scaffold.yaml', (t) => t.replace('targetFlux: "2.9"', 'targetFlux: "2.8"'));
    });
    assert.deepEqual(fromDescriptor.lines, old.lines);
  });

  it('honours substitute: disabled as a label too, and fails variables postBuild leaves unsubstituted for want of any value', async () => {
    const disabled = await findingsAfter((f) =>
      f.edit('base/apps/web/deployment.yaml', (t) =>
        t
          .replace(
            '  labels:\n    app.kubernetes.io/name: web\nspec:',
            '  labels:\n    app.kubernetes.io/name: web\n    kustomize.toolkit.fluxcd.io/substitute: disabled\nspec:',
          )
          .replace('https://web.base.invalid', 'https://web.${undefined_here}'),
      ),
    );
    // The overlay's patch still writes ${cluster_domain} into the value; the label keeps Flux (and verify) off it.
    assert.deepEqual(disabled.lines, []);
    const empty = await findingsAfter((f) =>
      f.edit('clusters/demo/flux/apps.yaml', (t) =>
        t.replace(
          '    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-config\n',
          '    substituteFrom:\n      - kind: ConfigMap\n        name: overrides\n        optional: true\n',
        ),
      ),
    );
    assert.deepEqual(empty.lines, [
      `${APPS}: postBuild defines no variable, so Flux skips substitution and applies \${cluster_domain} as literal text: define them, or set spec.postBuild.substituteStrategy: Always to apply their defaults`,
    ]);
  });
});
