/**
 * verify's rules for what a real cluster trips on, each checked on a tree the
 * real renderer wrote from a shipped platform, broken by one probe edit: the
 * finding names the file, the object and the fix. Each probe runs on its own
 * copy of the rendered repository; the untouched copies pass verify.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { writeFluxBootstrap } from '../../test/support/flux-bootstrap.js';
import { ValidationError } from '../errors.js';
import { renderWorkTree } from '../git/render-work-tree.js';
import { fluxOwnerConflict } from '../gitops/flux-instance-plan.js';
import { initPlatformRepository } from '../git/seed-repository.js';
import { platformDir } from '../package-paths.js';
import { scopeLabel } from '../sealing/seal.js';
import { sealSecretManifest } from '../sealing/seal-secret-manifest.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { unsealValue } from '../sealing/unseal.js';
import { createWorkTreeVerifier } from '../workspace/verify-work-tree.js';

const controller = createTestCertificate();
const certificate = parseSealingCertificate(controller.certificatePem);
const verify = createWorkTreeVerifier();
const CLUSTER = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const C = `clusters/${CLUSTER.name}`;

let tmp: string;
/**
 * platform/default with eu-prod-1 rendered (both passes' output, sealed with the test key), with a
 * registry credential supplied so tcr/registry-pull-secret is sealed too (without one none is written).
 */
let rendered: string;
let copies = 0;

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'verify-rules-'));
  rendered = join(tmp, 'default');
  await initPlatformRepository(rendered, platformDir());
  const registryAuth = JSON.stringify({ auths: { 'ghcr.io': { username: 'robot', password: 'pull-token' } } });
  await renderWorkTree(rendered, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test', registryAuth });
});

after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A fresh copy of the rendered repository. */
async function copyOf(source: string): Promise<string> {
  const dir = join(tmp, `probe-${copies++}`);
  await cp(source, dir, { recursive: true });
  return dir;
}

async function edit(dir: string, file: string, change: (text: string) => string): Promise<void> {
  const path = join(dir, file);
  const before = await readFile(path, 'utf8');
  const after = change(before);
  assert.notEqual(after, before, `the probe edit changes ${file}`);
  await writeFile(path, after);
}

/** verify's findings for the cluster after the probe edit. */
async function findingsAfter(probe: (dir: string) => Promise<void>, source = rendered, cluster = CLUSTER.name): Promise<readonly string[]> {
  const dir = await copyOf(source);
  await probe(dir);
  return (await verify(dir, { cluster })).findings;
}

describe('the rendered default platform', () => {
  it('passes verify untouched', async () => {
    assert.deepEqual(await findingsAfter(async () => {}), []);
  });
});

/** A HelmRelease in tcr reading `secrets` through valuesFrom, from a HelmRepository whose credentials are the sealed registry-pull-secret. */
function extrasRelease(secrets: readonly string[]): string {
  return (
    'apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: private\n  namespace: tcr\nspec:\n  interval: 1h\n  url: https://charts.example.net\n  secretRef:\n    name: registry-pull-secret\n---\n' +
    'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: extras\n  namespace: tcr\nspec:\n  interval: 30m\n  chart:\n    spec:\n      chart: extras\n      sourceRef:\n        kind: HelmRepository\n        name: private\n  valuesFrom:\n' +
    secrets.map((name) => `    - kind: Secret\n      name: ${name}\n`).join('')
  );
}

describe('SealedSecret scope: built where it was sealed for', () => {
  it('fails SealedSecrets a namePrefix renames, and the references that then dangle', async () => {
    const lines = await findingsAfter((dir) => edit(dir, `${C}/apps/sealed/kustomization.yaml`, (t) => `${t}namePrefix: x-\n`));
    const fix = (name: string) =>
      `${C}/apps: SealedSecret tcr/x-${name}: sealed for tcr/${name} (strict scope, spec.template.metadata) but built as tcr/x-${name}: the controller decrypts with the applied namespace/name, so unsealing fails and Secret tcr/x-${name} is never created. Keep it out of the namePrefix/nameSuffix/namespace transform (or targetNamespace) that renames it, or reseal it for tcr/x-${name}`;
    assert.ok(lines.includes(fix('tcr-database')), lines.join('\n'));
    assert.ok(lines.includes(fix('registry-pull-secret')), lines.join('\n'));
    // Nothing else creates tcr-database: the workloads reading it now read nothing.
    const dangling = lines.filter((l) => l.includes('Secret tcr/tcr-database does not exist'));
    assert.ok(dangling.length > 0, lines.join('\n'));
  });

  it('resolves HelmRelease valuesFrom and Flux source secretRef against the Secrets SealedSecrets create, by built name', async () => {
    assert.deepEqual(await findingsAfter((dir) => addToApps(dir, 'extras.yaml', extrasRelease(['tcr-database', 'tcr-values']))), [
      `${C}/apps: HelmRelease tcr/extras: spec.valuesFrom[1]: Secret tcr/tcr-values does not exist in the cluster's tree: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.secrets`,
    ]);
  });

  it('fails a SealedSecret whose metadata was moved to another namespace by hand, and keeps the Secret its built name gives', async () => {
    const lines = await findingsAfter((dir) =>
      edit(dir, `${C}/database/sealed/sealed-rabbitmq-credentials.yaml`, (t) => t.replace(/^( {2}namespace: )database$/m, '$1tcr')),
    );
    assert.ok(
      lines.includes(
        `${C}/database: SealedSecret tcr/rabbitmq-credentials: sealed for database/rabbitmq-credentials (strict scope, spec.template.metadata) but built as tcr/rabbitmq-credentials: the controller decrypts with the applied namespace/name, so unsealing fails and Secret tcr/rabbitmq-credentials is never created. Keep it out of the namePrefix/nameSuffix/namespace transform (or targetNamespace) that renames it, or reseal it for tcr/rabbitmq-credentials`,
      ),
      lines.join('\n'),
    );
    // RabbitMQ in database reads database/rabbitmq-credentials, which the template (not the controller) still names.
    assert.ok(
      lines.some((l) => l.includes('Secret database/rabbitmq-credentials does not exist')),
      lines.join('\n'),
    );
  });

  it('accepts a namespace-wide SealedSecret renamed within its namespace, and fails one moved out of it', async () => {
    const seal = (name: string) =>
      sealSecretManifest(`apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: tcr\nstringData:\n  token: s3cret\n`, {
        certificate,
        scope: 'namespace-wide',
      });
    // What `generate-gitops-env seal --scope namespace-wide` writes, in its own directory under apps with a transform.
    const add = async (dir: string, transform: string): Promise<void> => {
      await mkdir(join(dir, C, 'apps/extra'));
      await writeFile(join(dir, C, 'apps/extra/extra.yaml'), seal('extra-token'));
      await writeFile(
        join(dir, C, 'apps/extra/kustomization.yaml'),
        `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [extra.yaml]\n${transform}\n`,
      );
      await edit(dir, `${C}/apps/kustomization.yaml`, (t) => t.replace('  - sealed\n', '  - sealed\n  - extra\n'));
    };
    // Renamed within its namespace it still unseals, into the Secret its built name gives (the controller ignores spec.template's name).
    const readsSecret = (name: string) => (dir: string) => addToApps(dir, 'extras.yaml', extrasRelease([name]));
    const renamed = (name: string) => async (dir: string) => {
      await add(dir, 'namePrefix: renamed-');
      await readsSecret(name)(dir);
    };
    assert.deepEqual(await findingsAfter(renamed('renamed-extra-token')), []);
    assert.deepEqual(await findingsAfter(renamed('extra-token')), [
      `${C}/apps: HelmRelease tcr/extras: spec.valuesFrom[0]: Secret tcr/extra-token does not exist in the cluster's tree: add it (sealed, for a Secret), fix the name, or list it in scaffold.yaml provided.secrets`,
    ]);
    assert.deepEqual(await findingsAfter((dir) => add(dir, 'namespace: database')), [
      `${C}/apps: SealedSecret database/extra-token: sealed for tcr (namespace-wide scope, spec.template.metadata) but built as database: the controller decrypts with the applied namespace, so unsealing fails and Secret database/extra-token is never created. Keep it out of the namePrefix/nameSuffix/namespace transform (or targetNamespace) that renames it, or reseal it for database`,
    ]);
  });

  it('re-seals a kept credential for its new namespace after scaffold.yaml moves it, instead of keeping the file sealed for the old one', async () => {
    const dir = await copyOf(rendered);
    const file = join(dir, C, 'database/sealed/sealed-rabbitmq-credentials.yaml');
    const before = await readFile(file, 'utf8');
    await edit(dir, 'scaffold.yaml', (t) =>
      t.replace('  - name: rabbitmq-credentials\n    namespace: database\n', '  - name: rabbitmq-credentials\n    namespace: queue\n'),
    );
    const { result } = await renderWorkTree(dir, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    assert.equal(result.credentials.find((c) => c.name === 'rabbitmq-credentials')?.action, 'generated');
    const after = await readFile(file, 'utf8');
    assert.notEqual(after, before);
    const sealed = parse(after) as { metadata: { namespace: string; name: string }; spec: { encryptedData: Record<string, string> } };
    assert.equal(sealed.metadata.namespace, 'queue');
    for (const ciphertext of Object.values(sealed.spec.encryptedData)) {
      unsealValue({ privateKey: controller.privateKey, label: scopeLabel('strict', 'queue', 'rabbitmq-credentials'), ciphertext });
    }
  });
});

/** A file added to the apps layer of the rendered cluster, listed in its kustomization. */
async function addToApps(dir: string, name: string, yaml: string): Promise<void> {
  await writeFile(join(dir, C, 'apps', name), yaml);
  await edit(dir, `${C}/apps/kustomization.yaml`, (t) => t.replace('  - sealed\n', `  - sealed\n  - ${name}\n`));
}

/** Makes infrastructure wait for kube-prometheus-stack, whose chart installs the monitoring CRDs. */
const waitForPrometheus = (dir: string) =>
  edit(dir, `${C}/flux/infrastructure.yaml`, (t) =>
    t.replace(
      '  healthChecks:\n',
      '  healthChecks:\n    - apiVersion: helm.toolkit.fluxcd.io/v2\n      kind: HelmRelease\n      name: kube-prometheus-stack\n      namespace: monitoring\n',
    ),
  );

const builderMonitor = (namespace: string, port: string, namespaceSelector = '') =>
  `apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: tcr-builder\n  namespace: ${namespace}\nspec:\n${namespaceSelector}  selector:\n    matchLabels:\n      app.kubernetes.io/name: tcr-builder\n  endpoints:\n    - port: ${port}\n`;

describe('CRDs in time: only through a dependency that waits for the release installing them', () => {
  it('fails a ServiceMonitor in apps while infrastructure does not wait for kube-prometheus-stack, and accepts it once a healthCheck names the release', async () => {
    const monitor = builderMonitor('tcr', 'metrics');
    assert.deepEqual(await findingsAfter((dir) => addToApps(dir, 'monitor.yaml', monitor)), [
      `${C}/apps: ServiceMonitor tcr/tcr-builder: monitoring.coreos.com/ServiceMonitor does not exist yet when Kustomization flux-system/apps applies it: its CRD comes from HelmRelease monitoring/kube-prometheus-stack in Kustomization flux-system/infrastructure, which does not wait for it (no spec.wait: true, no healthCheck on it), so flux-system/apps starts once flux-system/infrastructure is applied, before the chart has installed the CRD, and its first reconciles fail. Add a healthCheck on HelmRelease monitoring/kube-prometheus-stack (or spec.wait: true) to Kustomization flux-system/infrastructure`,
    ]);
    assert.deepEqual(
      await findingsAfter(async (dir) => {
        await addToApps(dir, 'monitor.yaml', monitor);
        await waitForPrometheus(dir);
      }),
      [],
    );
    // spec.wait: true waits for every release it applies.
    assert.deepEqual(
      await findingsAfter(async (dir) => {
        await addToApps(dir, 'monitor.yaml', monitor);
        await edit(dir, `${C}/flux/infrastructure.yaml`, (t) => t.replace('  healthChecks:\n', '  wait: true\n  healthChecks:\n'));
      }),
      [],
    );
  });
});

describe('ServiceMonitor ports: in the namespaces the monitor selects from', () => {
  const withMonitor = (yaml: string) => async (dir: string) => {
    await waitForPrometheus(dir);
    await addToApps(dir, 'monitor.yaml', yaml);
  };

  it('fails a monitor whose selector matches Services only outside its own namespace', async () => {
    assert.deepEqual(await findingsAfter(withMonitor(builderMonitor('monitoring', 'metrics'))), [
      `${C}/apps: ServiceMonitor monitoring/tcr-builder: selects no Service in monitoring (its own namespace; no spec.namespaceSelector), though Services in tcr match its selector: nothing is scraped. Add spec.namespaceSelector.matchNames: [tcr]`,
    ]);
  });

  it('checks the port against the Services of namespaceSelector.matchNames and of any: true', async () => {
    const matchTcr = '  namespaceSelector:\n    matchNames: [tcr]\n';
    assert.deepEqual(await findingsAfter(withMonitor(builderMonitor('monitoring', 'metrics', matchTcr))), []);
    const wrongPort = `${C}/apps: ServiceMonitor monitoring/tcr-builder: endpoints[0].port "prom" is not a port of the Services it selects ("http", "metrics"): nothing is scraped. Use one of those names`;
    assert.deepEqual(await findingsAfter(withMonitor(builderMonitor('monitoring', 'prom', matchTcr))), [wrongPort]);
    assert.deepEqual(await findingsAfter(withMonitor(builderMonitor('monitoring', 'prom', '  namespaceSelector:\n    any: true\n'))), [wrongPort]);
  });
});

describe('Gateway API backendRefs: Services the tree or a declared release creates', () => {
  /** platform/matrix-example with a Talos and an EKS tooling cluster rendered. */
  let matrix: string;
  const TALOS = {
    name: 'tooling-proxmox',
    domain: 'tooling-proxmox.example.net',
    region: 'fra-dc2',
    role: 'tooling',
    infra_provider: 'proxmox',
    dns_provider: 'digitalocean',
  };
  const EKS = { name: 'tooling-aws', domain: 'tooling-aws.example.net', region: 'eu-west-1', role: 'tooling', infra_provider: 'aws', dns_provider: 'route53' };
  before(async () => {
    matrix = join(tmp, 'matrix');
    await initPlatformRepository(matrix, platformDir('matrix-example'));
    for (const cluster of [TALOS, EKS]) await renderWorkTree(matrix, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
  });

  /** A Hubble UI route added to the layer every tooling cluster gets (the platform itself routes to Hubble only from its talos layer). */
  const hubbleRoute = (backend: string) =>
    `---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: hubble-ops\n  namespace: kube-system\nspec:\n  parentRefs:\n    - { name: gw-int, namespace: gateway, sectionName: https }\n  hostnames: [hubble-ops.example.net]\n  rules:\n    - backendRefs:\n${backend}`;
  const addRoute = (backend: string) => (dir: string) => edit(dir, 'cc-observability-routes/routes.yaml', (t) => `${t}${hubbleRoute(backend)}`);

  it('passes the platform untouched on both infrastructures', async () => {
    assert.deepEqual(await findingsAfter(async () => {}, matrix, TALOS.name), []);
    assert.deepEqual(await findingsAfter(async () => {}, matrix, EKS.name), []);
  });

  it('fails a Hubble route on EKS, whose Cilium values do not turn on hubble-ui, and accepts it on Talos', async () => {
    const toHubble = addRoute('        - { name: hubble-ui, port: 80 }\n');
    assert.deepEqual(await findingsAfter(toHubble, matrix, TALOS.name), []);
    assert.deepEqual(await findingsAfter(toHubble, matrix, EKS.name), [
      "cc-observability-routes: HTTPRoute kube-system/hubble-ops: spec.rules[0].backendRefs[0]: Service kube-system/hubble-ui is created by nothing in the cluster's tree nor by a release of a chart scaffold.yaml declares: the route resolves to nothing and answers 500. Point it at a Service this cluster runs, add the layer that runs it, or declare the Service under its chart in scaffold.yaml charts[].services (with enabledBy when only some values create it)",
    ]);
  });

  it('fails a backendRef into another namespace without a ReferenceGrant there, and accepts it with one', async () => {
    const crossNamespace = addRoute('        - { name: grafana, namespace: observability, port: 80 }\n');
    assert.deepEqual(await findingsAfter(crossNamespace, matrix, TALOS.name), [
      'cc-observability-routes: HTTPRoute kube-system/hubble-ops: spec.rules[0].backendRefs[0]: Service observability/grafana is in another namespace and no ReferenceGrant in observability allows HTTPRoutes from kube-system: the reference is refused (RefNotPermitted). Add one to observability, or move the route next to the Service',
    ]);
    const grant =
      '---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata:\n  name: hubble-route\n  namespace: observability\nspec:\n  from:\n    - { group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: kube-system }\n  to:\n    - { group: "", kind: Service, name: grafana }\n';
    assert.deepEqual(
      await findingsAfter(
        async (dir) => {
          await crossNamespace(dir);
          await edit(dir, 'cc-observability-routes/routes.yaml', (t) => `${t}${grant}`);
        },
        matrix,
        TALOS.name,
      ),
      [],
    );
  });
});

describe('one owner of Flux: a FluxInstance or flux bootstrap, never both', () => {
  const SYNC_URL = 'https://git.example.net/fleet.git';
  const bootstrap = async (dir: string) => {
    await writeFluxBootstrap(dir, CLUSTER.name);
    await edit(dir, `${C}/kustomization.yaml`, (t) => t.replace(/^resources:\n/m, 'resources:\n  - flux-system\n'));
  };

  it('fails a FluxInstance rendered beside a bootstrap flux-system/, with the migration steps', async () => {
    const lines = await findingsAfter(async (dir) => {
      await renderWorkTree(dir, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test', fluxInstance: true, syncUrl: SYNC_URL });
      await bootstrap(dir);
    });
    assert.deepEqual(lines, [`${C}/flux-system: Kustomization flux-system/flux-system: ${fluxOwnerConflict(C)}`]);
    // Bootstrap alone passes.
    assert.deepEqual(await findingsAfter(bootstrap), []);
  });

  it('refuses to render --flux-instance into a cluster path flux bootstrap owns, with the same message, writing nothing', async () => {
    const dir = await copyOf(rendered);
    await bootstrap(dir);
    const before = await readFile(join(dir, C, 'flux/kustomization.yaml'), 'utf8');
    await assert.rejects(
      renderWorkTree(dir, { cluster: CLUSTER, pass: 'all', certificate, generatorVersion: '0.0.0-test', fluxInstance: true, syncUrl: SYNC_URL }),
      (error: unknown) => error instanceof ValidationError && error.issues.some((i) => i.field === 'flux-instance' && i.message === fluxOwnerConflict(C)),
    );
    assert.equal(await readFile(join(dir, C, 'flux/kustomization.yaml'), 'utf8'), before);
    await assert.rejects(readFile(join(dir, C, 'flux/flux-instance.yaml')), { code: 'ENOENT' });
  });
});
