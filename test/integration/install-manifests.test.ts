/**
 * The two ways to install: the Helm chart (charts/gitops-scaffolder) and the
 * complete kustomize overlay (deploy/overlays/example). Both are rendered by the
 * real tools (the chart by helm v4, `helm lint --strict` first; the overlay by
 * `kubectl kustomize`) and every object is
 * validated strictly; the chart's defaults must install what deploy/base does,
 * and the service must accept the environment each one sets.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { SERVICE_FORGE_ENV, SERVICE_FORGE_ENV_NAMES, serviceForgeAuth } from '../../src/delivery/service-forge-auth.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { helmLintStrict, helmTemplate } from '../support/helm.js';
import { parseManifests, strictProblems, type ManifestObject } from '../support/strict-manifests.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHART = `${ROOT}charts/gitops-scaffolder`;
// Upstream CRDs of the optional objects: ServiceMonitor (prometheus-operator) and HTTPRoute (Gateway API v1.6.1).
const EXTRA_CRDS = `${ROOT}test/fixtures/crds`;
const source = (path: string): Promise<string> => readFile(`${ROOT}${path}`, 'utf8');

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly secretKeyRef?: { readonly name: string; readonly key?: string; readonly optional?: boolean } };
}
interface PodTemplate {
  readonly serviceAccountName?: string;
  readonly containers: {
    readonly env?: EnvVar[];
    readonly volumeMounts?: { name: string; mountPath: string }[];
    readonly securityContext?: unknown;
    readonly readinessProbe?: unknown;
  }[];
  readonly volumes?: { readonly name: string; readonly persistentVolumeClaim?: { claimName: string } }[];
}
interface Rule {
  readonly apiGroups?: string[];
  readonly resources?: string[];
  readonly verbs: string[];
}

const label = (o: ManifestObject): string => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name}`;
const podOf = (objects: readonly ManifestObject[]): PodTemplate => {
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: PodTemplate } } };
  return deployment.spec.template.spec;
};
const envOf = (objects: readonly ManifestObject[]): EnvVar[] => podOf(objects).containers[0]?.env ?? [];
const literalEnv = (env: readonly EnvVar[]): Record<string, string> =>
  Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
const rulesOf = (objects: readonly ManifestObject[], kind: string, name: string): unknown =>
  (objects.find((o) => o.kind === kind && o.metadata.name === name) as { rules?: Rule[] } | undefined)?.rules;

interface EgressPeer {
  readonly ipBlock?: { readonly cidr: string; readonly except?: readonly string[] };
  readonly namespaceSelector?: unknown;
}
interface EgressPolicy {
  readonly policyTypes: string[];
  readonly egress?: { readonly to: EgressPeer[]; readonly ports: { readonly protocol: string; readonly port: number }[] }[];
}
const egressOf = (from: readonly ManifestObject[], name: string): EgressPolicy =>
  (from.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === name) as unknown as { spec: EgressPolicy }).spec;

/** An IPv4 address in a CIDR (IPv6 blocks never hold one). */
function inCidr(address: string, cidr: string): boolean {
  const [network = '', bits = '32'] = cidr.split('/');
  if (network.includes(':')) return false;
  const number = (dotted: string): number => dotted.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(number(address) / size) === Math.floor(number(network) / size);
}

/** Whether an egress policy lets TCP to address:port out, by NetworkPolicy's rules (any rule; a peer's ipBlock minus its excepts). */
function allows(policy: EgressPolicy, address: string, port: number): boolean {
  return (policy.egress ?? []).some(
    (rule) =>
      rule.ports.some((p) => p.protocol === 'TCP' && p.port === port) &&
      rule.to.some((peer) => peer.ipBlock !== undefined && inCidr(address, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((e) => inCidr(address, e))),
  );
}

/** Asserts that every variable is one the service reads and that it accepts them together (as in a pod). */
async function assertServiceAccepts(env: readonly EnvVar[]): Promise<ReturnType<typeof loadServiceConfig>> {
  const config = await source('src/service/service-config.ts');
  // The forge token and its API are read by src/main.ts (serviceForgeAuth), beside the service config.
  const forgeEnv = SERVICE_FORGE_ENV_NAMES;
  for (const { name } of env) if (!forgeEnv.includes(name)) assert.match(config, new RegExp(`^ {2}${name}: `, 'm'), `${name} is read by the service`);
  const fromSecret = env.some((e) => e.name === 'DATABASE_URL') ? { DATABASE_URL: 'postgresql://scaffolder@postgres.example:5432/scaffolder' } : {};
  await serviceForgeAuth(literalEnv(env));
  return loadServiceConfig({ ...literalEnv(env), ...fromSecret, KUBERNETES_SERVICE_HOST: '10.0.0.1' }, '/');
}

/** Everything an object refers to by name is in the same output: namespaces, ServiceAccounts, claims, Secrets. */
function dangling(objects: readonly ManifestObject[]): string[] {
  const has = (kind: string, name: string, namespace?: string): boolean =>
    objects.some((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
  const missing: string[] = [];
  for (const o of objects) {
    if (o.metadata.namespace !== undefined && !has('Namespace', o.metadata.namespace)) missing.push(`${label(o)}: Namespace ${o.metadata.namespace}`);
  }
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  const namespace = deployment.metadata.namespace;
  const pod = podOf(objects);
  if (pod.serviceAccountName !== undefined && !has('ServiceAccount', pod.serviceAccountName, namespace))
    missing.push(`ServiceAccount ${pod.serviceAccountName}`);
  for (const volume of pod.volumes ?? []) {
    const claim = volume.persistentVolumeClaim?.claimName;
    if (claim !== undefined && !has('PersistentVolumeClaim', claim, namespace)) missing.push(`PersistentVolumeClaim ${claim}`);
  }
  // An optional Secret (the forge token) is the operator's to create when they want it; the pod starts without it.
  for (const e of envOf(objects).filter((v) => v.valueFrom?.secretKeyRef?.optional !== true)) {
    const secret = e.valueFrom?.secretKeyRef?.name;
    if (secret !== undefined && !has('Secret', secret, namespace)) missing.push(`Secret ${secret}`);
  }
  return missing;
}

describe('deploy/overlays/example: kubectl apply -k installs it as is', () => {
  let objects: ManifestObject[];
  let base: ManifestObject[];

  before(async () => {
    objects = parseManifests(await new KubectlKustomize().build(ROOT, 'deploy/overlays/example'));
    base = parseManifests(await new KubectlKustomize().build(ROOT, 'deploy/base'));
  });

  it("every object passes the project's strict validators", async () => {
    assert.deepEqual(await strictProblems(objects), []);
  });

  it('is the base plus the data volume, and refers to nothing it does not create (no Secret to make first)', () => {
    assert.deepEqual(objects.map(label).sort(), [...base.map(label), 'PersistentVolumeClaim kubeopera-core/gitops-scaffolder-data'].sort());
    assert.deepEqual(dangling(objects), []);
    assert.ok(!objects.some((o) => o.kind === 'Secret'), 'no Secret in Git');
  });

  it('the service accepts its environment: the embedded database on the claim, requests name their repository', async () => {
    const config = await assertServiceAccepts(envOf(objects));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.defaultGitopsRepoUrl, undefined);
    const pod = podOf(objects);
    const claimVolume = pod.volumes?.find((v) => v.persistentVolumeClaim?.claimName === 'gitops-scaffolder-data')?.name;
    const mount = pod.containers[0]?.volumeMounts?.find((m) => m.name === claimVolume);
    assert.equal(mount?.mountPath, config.dataDir, 'DATA_DIR is on the claim');
  });
});

describe('charts/gitops-scaffolder', () => {
  let base: ManifestObject[];
  const render = async (values: Record<string, unknown> = {}): Promise<ManifestObject[]> =>
    parseManifests((await helmTemplate(CHART, { release: 'gitops-scaffolder', namespace: 'kubeopera-core', values })).manifests);

  before(async () => {
    base = parseManifests(await new KubectlKustomize().build(ROOT, 'deploy/base'));
  });

  it('passes `helm lint --strict`', async () => {
    assert.match(await helmLintStrict(CHART), /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('is versioned with the package', async () => {
    const chart = parse(await source('charts/gitops-scaffolder/Chart.yaml')) as { version: string; appVersion: string };
    const version = (JSON.parse(await source('package.json')) as { version: string }).version;
    assert.equal(chart.version, version);
    assert.equal(chart.appVersion, version);
  });

  it('values.yaml passes values.schema.json, and the schema refuses typos and wrong types', async () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(await source('charts/gitops-scaffolder/values.schema.json')) as object);
    const values = parse(await source('charts/gitops-scaffolder/values.yaml')) as Record<string, unknown>;
    assert.ok(validate(values), JSON.stringify(validate.errors));
    assert.ok(!validate({ ...values, imgae: {} }), 'an unknown key');
    assert.ok(!validate({ ...values, logLevel: 'loud' }));
    assert.ok(
      !validate({ ...values, forge: { tokenSecret: { name: 'forge', key: 'token' }, apiUrl: 'http://api.github.com' } }),
      'the token goes over https only',
    );
    assert.ok(!validate({ ...values, rbac: { operators: [{ kind: 'ServiceAccount', name: 'x' }] } }), 'a ServiceAccount subject without namespace');
  });

  it('with its defaults, renders what deploy/base installs (same objects, rules and environment), each strictly valid', async () => {
    const objects = await render();
    assert.deepEqual(await strictProblems(objects), []);
    // The release namespace is Helm's (--create-namespace); the operators' binding is named for its list.
    const expected = base
      .filter((o) => !(o.kind === 'Namespace' && o.metadata.name === 'kubeopera-core'))
      .map((o) => (o.metadata.name === 'gitops-scaffolder-host-cluster-controller' ? 'ClusterRoleBinding -/gitops-scaffolder-operators' : label(o)));
    assert.deepEqual(objects.map(label).sort(), expected.sort());
    for (const o of base.filter((b) => b.kind === 'Role' || b.kind === 'ClusterRole')) {
      assert.deepEqual(rulesOf(objects, o.kind, o.metadata.name), rulesOf(base, o.kind, o.metadata.name), label(o));
    }
    assert.deepEqual(envOf(objects), envOf(base));
    assert.deepEqual(podOf(objects).containers[0]?.securityContext, podOf(base).containers[0]?.securityContext);
    await assertServiceAccepts(envOf(objects));
  });

  it('with every option on (ServiceMonitor, Ingress, HTTPRoute, bindings, allow-lists), every object is strictly valid and the service accepts its environment', async () => {
    const objects = await render({
      metrics: { serviceMonitor: { enabled: true } },
      ingress: { enabled: true, className: 'nginx', tlsSecretName: 'scaffolder-tls', annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } },
      httpRoute: { enabled: true },
      rbac: {
        viewers: [{ kind: 'Group', name: 'platform-team', apiGroup: 'rbac.authorization.k8s.io' }],
        admins: [{ kind: 'User', name: 'alice@example.com', apiGroup: 'rbac.authorization.k8s.io' }],
      },
      networkPolicy: { allowFromNamespaces: ['ingress-nginx'] },
      allowedRepositoryUrls: ['https://git.example.net/platform/'],
      auth: { allowedServiceAccounts: ['system:serviceaccount:kubeopera-core:*'] },
      imagePullSecrets: [{ name: 'registry' }],
      forge: { tokenSecret: { name: 'github-forge', key: 'pat' }, apiUrl: 'https://api.github.com' },
      runnerTmpSizeLimit: '512Mi',
      runnerScratchSizeLimit: '1Gi',
      runnerMemoryLimit: '2Gi',
      runnerImagePullSecrets: [{ name: 'runner-registry' }, { name: 'mirror-pull' }],
    });
    assert.deepEqual(await strictProblems(objects, [EXTRA_CRDS]), []);
    for (const kind of ['ServiceMonitor', 'Ingress', 'HTTPRoute'])
      assert.ok(
        objects.some((o) => o.kind === kind),
        kind,
      );
    const config = await assertServiceAccepts(envOf(objects));
    assert.equal(config.metricsPublic, true, 'the ServiceMonitor scrapes without a token');
    assert.deepEqual(config.allowedRepositoryUrls, ['https://git.example.net/platform/']);
    assert.equal(config.runnerTmpSizeLimit, '512Mi', "the runner pods' /tmp bound reaches the service");
    assert.equal(config.runnerScratchSizeLimit, '1Gi', "the runner pods' scratch bound reaches the service");
    assert.equal(config.runnerMemoryLimit, '2Gi', "the runner pods' memory limit reaches the service");
    assert.deepEqual(config.runnerImagePullSecrets, ['runner-registry', 'mirror-pull'], "the runner pods' pull secrets reach the service");
    // The forge token from the operator's Secret, sent only to the API URL they set.
    const env = envOf(objects);
    assert.deepEqual(env.find((e) => e.name === SERVICE_FORGE_ENV.token)?.valueFrom, { secretKeyRef: { name: 'github-forge', key: 'pat', optional: true } });
    assert.equal((await serviceForgeAuth({ ...literalEnv(env), [SERVICE_FORGE_ENV.token]: 'from-the-secret' })).apiUrl, 'https://api.github.com');
    const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'gitops-scaffolder') as unknown as {
      spec: { ingress: { from: unknown[] }[] };
    };
    const from = JSON.stringify(policy.spec.ingress[0]?.from);
    for (const ns of ['kubeopera-core', 'ingress-nginx', 'monitoring']) assert.ok(from.includes(`"${ns}"`), ns);
    const bindings = objects
      .filter((o) => o.kind === 'ClusterRoleBinding')
      .map((o) => o.metadata.name)
      .sort();
    assert.deepEqual(bindings, ['gitops-scaffolder-admins', 'gitops-scaffolder-auth-delegator', 'gitops-scaffolder-operators', 'gitops-scaffolder-viewers']);
  });

  it("limits both pods' egress as deploy/base does: runners reach only public Git, forges, registries and API servers; the service also its API server and PostgreSQL", async () => {
    const objects = await render();
    for (const name of ['gitops-scaffolder', 'scaffold-runner']) {
      assert.deepEqual(egressOf(objects, name).policyTypes, ['Ingress', 'Egress'], name);
      assert.deepEqual(egressOf(objects, name).egress, egressOf(base, name).egress, `${name}: the chart's egress is deploy/base's`);
    }
    const runner = egressOf(objects, 'scaffold-runner');
    const service = egressOf(objects, 'gitops-scaffolder');
    // [address, port, runner may, service may]
    const cases: [string, number, boolean, boolean][] = [
      ['140.82.121.4', 443, true, true], // github.com: clone, push, forge API
      ['140.82.121.4', 22, true, true], // Git over ssh
      ['140.82.121.4', 9418, true, true], // git://
      ['34.120.1.1', 6443, true, true], // a new cluster's public API server
      ['140.82.121.4', 80, false, false], // no plain http out
      ['140.82.121.4', 25, false, false],
      ['169.254.169.254', 80, false, false], // the cloud metadata address: the node's credentials
      ['169.254.169.254', 443, false, false],
      ['10.96.0.1', 443, false, true], // this cluster's API server (a Service or endpoint address): the service only
      ['10.0.0.10', 6443, false, true],
      ['10.0.0.10', 22, false, false], // an internal ssh server
      ['192.168.1.20', 9418, false, false],
      ['100.64.3.4', 443, false, true],
      ['127.0.0.1', 443, false, false],
      ['10.0.12.7', 5432, false, true], // PostgreSQL: the service only
      ['172.20.0.9', 8080, false, false], // another in-cluster service
    ];
    for (const [address, port, runnerMay, serviceMay] of cases) {
      assert.equal(allows(runner, address, port), runnerMay, `runner → ${address}:${port}`);
      assert.equal(allows(service, address, port), serviceMay, `service → ${address}:${port}`);
    }

    // An installation names its internal Git server, narrows the API server and the database.
    const tuned = await render({
      networkPolicy: {
        egress: { allowedInternalCidrs: ['10.20.0.0/16'], kubernetesApi: { cidrs: ['10.0.0.10/32'] }, database: { cidrs: ['10.30.0.5/32'], port: 5433 } },
      },
    });
    assert.deepEqual(await strictProblems(tuned), []);
    const [tunedRunner, tunedService] = [egressOf(tuned, 'scaffold-runner'), egressOf(tuned, 'gitops-scaffolder')];
    assert.equal(allows(tunedRunner, '10.20.4.4', 22), true, 'the listed internal Git server');
    assert.equal(allows(tunedRunner, '10.21.4.4', 22), false, 'beside it');
    assert.equal(allows(tunedService, '10.0.0.10', 443), true, 'the named API server');
    assert.equal(allows(tunedService, '10.96.0.1', 443), false, 'any other internal https');
    assert.equal(allows(tunedService, '10.30.0.5', 5433), true, 'the named database');
    assert.equal(allows(tunedService, '10.30.0.6', 5433), false);
    assert.equal(allows(tunedService, '10.30.0.5', 5432), false);

    const open = await render({ networkPolicy: { egress: { enabled: false } } });
    assert.deepEqual(egressOf(open, 'scaffold-runner').policyTypes, ['Ingress']);
  });

  it('pins the service and runner images by digest when given one, and the service accepts the pinned runner image', async () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const objects = await render({
      image: { repository: 'ghcr.io/kubeopera/gitops-scaffolder', digest },
      runnerImage: { repository: 'ghcr.io/kubeopera/scaffold-runner', digest },
    });
    const pod = podOf(objects) as PodTemplate & { containers: { image?: string }[] };
    assert.equal(pod.containers[0]?.image, `ghcr.io/kubeopera/gitops-scaffolder:0.1.0@${digest}`);
    const config = await assertServiceAccepts(envOf(objects));
    assert.equal(config.runnerImage, `ghcr.io/kubeopera/scaffold-runner:0.1.0@${digest}`);
    await assert.rejects(render({ runnerImage: { repository: 'ghcr.io/kubeopera/scaffold-runner', digest: 'latest' } }), /digest/);
  });

  it('refuses to render without the shared repository (required), and drops what is switched off', async () => {
    // values.schema.json refuses it before the template's own `required` would.
    await assert.rejects(render({ defaultGitopsRepoUrl: '' }), /defaultGitopsRepoUrl': minLength/);
    const bare = await render({ rbac: { create: false, accessRoles: false }, networkPolicy: { enabled: false }, namespaces: { create: false } });
    assert.deepEqual([...new Set(bare.map((o) => o.kind))].sort(), ['Deployment', 'PodDisruptionBudget', 'Service', 'ServiceAccount']);
  });
});
