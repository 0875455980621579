/**
 * The deployment artefacts: `deploy/base` (kustomize) and the two Dockerfiles.
 *
 * Builds the base with the real `kubectl kustomize` (through the project's
 * KubectlKustomize), validates every object with the project's own strict
 * validators, and checks the properties the manifests promise: least-privilege
 * RBAC derived from the Kubernetes calls the code actually makes, a hardened
 * Deployment whose every variable is one the service reads (and whose
 * environment the service accepts), and images that run the package's bins as
 * a non-root user.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { ROUTE_PERMISSIONS } from '../../src/http/route-permissions.js';
import { API_GROUP } from '../../src/service/authorizer.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { SERVICE_FORGE_ENV, SERVICE_FORGE_ENV_NAMES, serviceForgeAuth } from '../../src/delivery/service-forge-auth.js';
import { strictProblems } from '../support/strict-manifests.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const source = (path: string): Promise<string> => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The Kubernetes executor, all of it: the executor and the files it is split into (manifests, Job state, pod logs). */
async function executorSource(): Promise<string> {
  const files = ['kube-job-executor.ts', 'kube-job-manifests.ts', 'kube-job-state.ts', 'kube-pod-logs.ts'];
  return (await Promise.all(files.map((file) => source(`src/kubernetes/${file}`)))).join('\n');
}

const CORE_NS = 'kubeopera-core';
const JOB_NS = 'kubeopera-provisioning';
const KUBECONFIG_NS = 'clusters';
const SERVICE_ACCOUNT = { kind: 'ServiceAccount', name: 'gitops-scaffolder', namespace: CORE_NS };

/**
 * Everything the service may do, as `namespace|apiGroup/resource:verb` (namespace
 * `*` for cluster-wide). The test also derives this set from the code.
 */
const EXPECTED_GRANTS = [
  `${JOB_NS}|batch/jobs:create`,
  `${JOB_NS}|batch/jobs:get`,
  `${JOB_NS}|batch/jobs:delete`,
  `${JOB_NS}|/pods:get`,
  `${JOB_NS}|/pods:list`,
  `${JOB_NS}|/pods/log:get`,
  `${JOB_NS}|/secrets:create`,
  `${JOB_NS}|/secrets:patch`,
  `${JOB_NS}|/secrets:delete`,
  `${KUBECONFIG_NS}|/secrets:get`,
  '*|authentication.k8s.io/tokenreviews:create',
  '*|authorization.k8s.io/subjectaccessreviews:create',
].sort();

/** The ClusterRoles that grant people and services the product's own API (deploy/base/access-roles.yaml). */
const ACCESS_ROLES = ['gitops-scaffolder-viewer', 'gitops-scaffolder-operator', 'gitops-scaffolder-admin'];

// ---- small typed views of the built objects -------------------------------------------------

type Json = Record<string, unknown>;

interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly [key: string]: unknown;
}

interface PolicyRule {
  readonly apiGroups?: string[];
  readonly resources?: string[];
  readonly verbs: string[];
  readonly resourceNames?: string[];
  readonly nonResourceURLs?: string[];
}

interface RoleObject extends K8sObject {
  readonly rules?: PolicyRule[];
}

interface Subject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

interface BindingObject extends K8sObject {
  readonly roleRef: { readonly apiGroup: string; readonly kind: string; readonly name: string };
  readonly subjects?: Subject[];
}

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly secretKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean } } & Json;
}

interface Probe {
  readonly httpGet?: { readonly path: string; readonly port: string | number };
}

interface SecurityContext {
  readonly runAsNonRoot?: boolean;
  readonly runAsUser?: number;
  readonly readOnlyRootFilesystem?: boolean;
  readonly allowPrivilegeEscalation?: boolean;
  readonly privileged?: boolean;
  readonly capabilities?: { readonly drop?: string[]; readonly add?: string[] };
  readonly seccompProfile?: { readonly type: string };
}

interface Container {
  readonly name: string;
  readonly image: string;
  readonly env?: EnvVar[];
  readonly envFrom?: unknown[];
  readonly ports?: { readonly name?: string; readonly containerPort: number }[];
  readonly readinessProbe?: Probe;
  readonly livenessProbe?: Probe;
  readonly startupProbe?: Probe;
  readonly resources?: { readonly requests?: Record<string, string>; readonly limits?: Record<string, string> };
  readonly securityContext?: SecurityContext;
  readonly volumeMounts?: { readonly name: string; readonly mountPath: string }[];
}

interface PodSpec {
  readonly serviceAccountName?: string;
  readonly automountServiceAccountToken?: boolean;
  readonly hostNetwork?: boolean;
  readonly hostPID?: boolean;
  readonly securityContext?: SecurityContext;
  readonly topologySpreadConstraints?: unknown[];
  readonly containers: Container[];
  readonly initContainers?: Container[];
  readonly volumes?: { readonly name: string; readonly emptyDir?: Json }[];
}

interface DeploymentObject extends K8sObject {
  readonly spec: {
    readonly replicas?: number;
    readonly selector: { readonly matchLabels: Record<string, string> };
    readonly template: { readonly metadata: { readonly labels: Record<string, string> }; readonly spec: PodSpec };
  };
}

const NAMESPACED_KINDS = new Set([
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'Deployment',
  'Service',
  'NetworkPolicy',
  'PodDisruptionBudget',
  'Secret',
  'ConfigMap',
]);

function matches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

// ---- Dockerfile reading -------------------------------------------------------------------

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

interface Stage {
  readonly image: string;
  readonly name?: string;
  readonly instructions: Instruction[];
}

/** Instructions of a Dockerfile: comments dropped, `\` continuations joined; stages split at FROM. */
function dockerStages(text: string): { readonly globalArgs: Map<string, string>; readonly stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && /^\s*(#|$)/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  if (pending !== '') logical.push(pending.trim());

  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const space = line.search(/\s/);
    const keyword = (space < 0 ? line : line.slice(0, space)).toUpperCase();
    const args = space < 0 ? '' : line.slice(space + 1).trim();
    if (keyword === 'FROM') {
      const [image = '', as, name] = args.replace(/--platform=\S+\s+/, '').split(/\s+/);
      const resolved = image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a?: string, b?: string) => globalArgs.get(a ?? b ?? '') ?? '');
      stages.push({ image: resolved, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else if (stages.length === 0) {
      if (keyword === 'ARG') {
        const [key = '', value = ''] = args.split('=', 2);
        globalArgs.set(key, value);
      }
    } else {
      stages.at(-1)!.instructions.push({ keyword, args });
    }
  }
  return { globalArgs, stages };
}

function instructionsOf(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** Stage-local ARG defaults (`ARG NAME=value`). */
function argDefaults(stage: Stage): Map<string, string> {
  const args = new Map<string, string>();
  for (const arg of instructionsOf(stage, 'ARG')) {
    const eq = arg.indexOf('=');
    args.set(eq < 0 ? arg : arg.slice(0, eq), eq < 0 ? '' : arg.slice(eq + 1));
  }
  return args;
}

/** A COPY's flags, sources and destination. */
function copyOf(args: string): { readonly from?: string; readonly sources: string[]; readonly destination: string } {
  const words = args.split(/\s+/);
  const flags = words.filter((w) => w.startsWith('--'));
  const paths = words.filter((w) => !w.startsWith('--'));
  const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
  return { ...(from ? { from } : {}), sources: paths.slice(0, -1), destination: paths.at(-1) ?? '' };
}

/** The user a stage ends with, as `uid[:gid]`. */
function finalUser(stage: Stage): string | undefined {
  return instructionsOf(stage, 'USER').at(-1);
}

/** `command` with every `npm run <script>` replaced by that package.json script, itself expanded. */
function expandNpmRuns(command: string, scripts: Readonly<Record<string, string>>, depth = 0): string {
  assert.ok(depth < 10, `npm scripts call each other in a loop: ${command}`);
  return command.replace(/npm run ([\w:-]+)/g, (_m, name: string) => {
    const script = scripts[name];
    assert.ok(script !== undefined, `package.json has no script ${name}`);
    return `(${expandNpmRuns(script, scripts, depth + 1)})`;
  });
}

/** The package-relative script an exec-form ENTRYPOINT runs. */
function entrypointScript(stage: Stage): string {
  const entrypoint = instructionsOf(stage, 'ENTRYPOINT').at(-1);
  assert.ok(entrypoint, 'the final stage sets an ENTRYPOINT');
  const argv = JSON.parse(entrypoint) as unknown;
  assert.ok(Array.isArray(argv) && argv.every((a) => typeof a === 'string'), 'ENTRYPOINT is in exec form (a JSON array)');
  const script = (argv as string[]).find((a) => a.endsWith('.js'));
  assert.ok(script, 'ENTRYPOINT runs a .js file with node');
  const workdir = instructionsOf(stage, 'WORKDIR').at(-1) ?? '/';
  return posix.relative(workdir, posix.resolve(workdir, script));
}

// ---- the tests ----------------------------------------------------------------------------

describe('deploy/base', () => {
  let objects: K8sObject[];
  const byKind = (kind: string): K8sObject[] => objects.filter((o) => o.kind === kind);
  const one = <T extends K8sObject>(kind: string, name: string, namespace?: string): T => {
    const found = objects.filter((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
    assert.equal(found.length, 1, `exactly one ${kind} ${namespace ?? ''}/${name}`);
    return found[0] as T;
  };
  const deployment = (): DeploymentObject => one<DeploymentObject>('Deployment', 'gitops-scaffolder', CORE_NS);
  const container = (): Container => {
    const containers = deployment().spec.template.spec.containers;
    assert.equal(containers.length, 1);
    return containers[0]!;
  };

  before(async () => {
    const text = await new KubectlKustomize().build(ROOT, 'deploy/base');
    objects = parseAllDocuments(text).map((document) => {
      assert.deepEqual(document.errors, [], 'kustomize output parses');
      return document.toJS() as K8sObject;
    });
  });

  describe('kubectl kustomize', () => {
    it('builds the expected objects, every namespaced one in a named namespace', () => {
      const names = objects.map((o) => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name}`).sort();
      assert.deepEqual(names, [
        `ClusterRole -/gitops-scaffolder-admin`,
        `ClusterRole -/gitops-scaffolder-auth-delegator`,
        `ClusterRole -/gitops-scaffolder-operator`,
        `ClusterRole -/gitops-scaffolder-viewer`,
        `ClusterRoleBinding -/gitops-scaffolder-auth-delegator`,
        `ClusterRoleBinding -/gitops-scaffolder-host-cluster-controller`,
        `Deployment ${CORE_NS}/gitops-scaffolder`,
        `Namespace -/${KUBECONFIG_NS}`,
        `Namespace -/${CORE_NS}`,
        `Namespace -/${JOB_NS}`,
        `NetworkPolicy ${CORE_NS}/gitops-scaffolder`,
        `NetworkPolicy ${JOB_NS}/scaffold-runner`,
        `PodDisruptionBudget ${CORE_NS}/gitops-scaffolder`,
        `Role ${KUBECONFIG_NS}/gitops-scaffolder-kubeconfigs`,
        `Role ${JOB_NS}/gitops-scaffolder-runs`,
        `RoleBinding ${KUBECONFIG_NS}/gitops-scaffolder-kubeconfigs`,
        `RoleBinding ${JOB_NS}/gitops-scaffolder-runs`,
        `Service ${CORE_NS}/gitops-scaffolder`,
        `ServiceAccount ${CORE_NS}/gitops-scaffolder`,
        `ServiceAccount ${JOB_NS}/scaffold-runner`,
      ]);
      const declared = new Set(byKind('Namespace').map((n) => n.metadata.name));
      for (const object of objects) {
        if (!NAMESPACED_KINDS.has(object.kind)) continue;
        assert.ok(object.metadata.namespace, `${object.kind} ${object.metadata.name} names its namespace`);
        assert.ok(declared.has(object.metadata.namespace), `${object.kind} ${object.metadata.name}: namespace ${object.metadata.namespace} is declared`);
      }
    });

    it('ships no Secret: the database URL and every credential stay out of the manifests', () => {
      assert.deepEqual(byKind('Secret'), []);
    });

    it('never lets Flux prune a namespace (they hold objects this base does not own)', () => {
      for (const namespace of byKind('Namespace')) {
        const annotations = (namespace.metadata as { annotations?: Record<string, string> }).annotations ?? {};
        assert.equal(annotations['kustomize.toolkit.fluxcd.io/prune'], 'disabled', namespace.metadata.name);
      }
      const provisioning = one('Namespace', JOB_NS);
      assert.equal(provisioning.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
    });
  });

  describe('schema validation', () => {
    it("every object passes the project's strict validators", async () => {
      assert.deepEqual(await strictProblems(objects), []);
    });
  });

  describe('RBAC', () => {
    // The service's own permissions; the access roles (for its callers) are checked on their own below.
    const roles = (): RoleObject[] =>
      objects.filter((o): o is RoleObject => (o.kind === 'Role' || o.kind === 'ClusterRole') && !ACCESS_ROLES.includes(o.metadata.name));
    const bindings = (): BindingObject[] =>
      objects.filter(
        (o): o is BindingObject => (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') && !ACCESS_ROLES.includes((o as BindingObject).roleRef.name),
      );

    /** What the bound roles grant, as `namespace|group/resource:verb`. */
    function granted(): string[] {
      const grants = new Set<string>();
      for (const binding of bindings()) {
        const role = roles().find(
          (r) =>
            r.kind === binding.roleRef.kind &&
            r.metadata.name === binding.roleRef.name &&
            (r.kind === 'ClusterRole' || r.metadata.namespace === binding.metadata.namespace),
        );
        assert.ok(role, `${binding.kind} ${binding.metadata.name} refers to a role of this base`);
        const scope = binding.kind === 'ClusterRoleBinding' ? '*' : binding.metadata.namespace!;
        for (const rule of role.rules ?? []) {
          for (const group of rule.apiGroups ?? [])
            for (const resource of rule.resources ?? []) for (const verb of rule.verbs) grants.add(`${scope}|${group}/${resource}:${verb}`);
        }
      }
      return [...grants].sort();
    }

    it('uses no wildcard, resource-name, non-resource-URL or escalation rules', () => {
      for (const role of roles()) {
        for (const rule of role.rules ?? []) {
          const where = `${role.kind} ${role.metadata.name}`;
          for (const field of [rule.apiGroups, rule.resources, rule.verbs]) assert.ok(!(field ?? []).includes('*'), `${where}: no wildcard`);
          assert.equal(rule.nonResourceURLs, undefined, `${where}: no nonResourceURLs`);
          assert.equal(rule.resourceNames, undefined, `${where}: no resourceNames`);
          for (const verb of ['escalate', 'bind', 'impersonate', 'update', 'deletecollection']) assert.ok(!rule.verbs.includes(verb), `${where}: no ${verb}`);
        }
      }
    });

    it('grants exactly the listed permissions, all to the service ServiceAccount', () => {
      assert.deepEqual(granted(), EXPECTED_GRANTS);
      for (const binding of bindings()) assert.deepEqual(binding.subjects, [SERVICE_ACCOUNT], `${binding.kind} ${binding.metadata.name}`);
      // Every role is bound (nothing defined for show) and bound once.
      assert.equal(bindings().length, roles().length);
    });

    it('the Job-namespace Role grants only create/get/delete on jobs, get/list on pods, get on pods/log, create/patch/delete on secrets', () => {
      const role = one<RoleObject>('Role', 'gitops-scaffolder-runs', JOB_NS);
      const rules = (role.rules ?? []).map((r) => `${(r.apiGroups ?? []).join(',')}/${(r.resources ?? []).join(',')}:${[...r.verbs].sort().join(',')}`).sort();
      assert.deepEqual(rules, ['/pods/log:get', '/pods:get,list', '/secrets:create,delete,patch', 'batch/jobs:create,delete,get']);
    });

    it('gives no cluster-wide access to Secrets, and the ClusterRole only creates TokenReviews and SubjectAccessReviews', () => {
      const clusterRoles = roles().filter((r) => r.kind === 'ClusterRole');
      assert.deepEqual(
        clusterRoles.map((r) => r.rules),
        [
          [
            { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
            { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
          ],
        ],
      );
      assert.ok(!granted().some((g) => g.startsWith('*|') && g.includes('/secrets:')));
      // Secrets are readable in one namespace only, and never listable.
      assert.deepEqual(
        granted().filter((g) => /\/secrets:(get|list|watch)$/.test(g)),
        [`${KUBECONFIG_NS}|/secrets:get`],
      );
    });

    it('matches the Kubernetes calls the code makes, in both directions', async () => {
      const executor = await executorSource();
      const authenticator = await source('src/kubernetes/token-review-authenticator.ts');
      const authorizer = await source('src/kubernetes/subject-access-review-authorizer.ts');
      const verbOf: Record<string, string> = {
        create: 'create',
        read: 'get',
        list: 'list',
        patch: 'patch',
        replace: 'update',
        delete: 'delete',
        deleteCollection: 'deletecollection',
      };
      const groupOf: Record<string, string> = { batch: 'batch', core: '' };
      const used = new Set<string>();
      const calls = /this\.(\w+)\.(create|read|list|patch|replace|deleteCollection|delete)Namespaced(\w+?)\(\s*\{\s*namespace:\s*([\w.]+)/g;
      for (const [, client = '', op = '', kind = '', namespace = ''] of executor.matchAll(calls)) {
        assert.ok(client in groupOf, `known API client this.${client}`);
        assert.ok(/^(Job|Pod|Secret)$/.test(kind), `known kind ${kind}`);
        // The run objects live in JOB_NAMESPACE; only a kubeconfig secretRef is read from its own namespace.
        const scope = namespace === 'this.namespace' ? JOB_NS : namespace === 'kubeconfig.namespace' ? KUBECONFIG_NS : `unknown namespace ${namespace}`;
        used.add(`${scope}|${groupOf[client]}/${kind.toLowerCase()}s:${verbOf[op]}`);
      }
      // Every client call of the executor was recognised by the pattern above.
      const allCalls = [...executor.matchAll(/this\.(?:batch|core)\.(\w+)\(/g)].length;
      assert.equal(allCalls, [...executor.matchAll(calls)].length, 'every BatchV1Api/CoreV1Api call names its namespace first');
      if (/this\.podLog\.log\(/.test(executor)) used.add(`${JOB_NS}|/pods/log:get`);
      assert.ok(!/new Watch\(|watch:\s*true/.test(executor), 'the executor watches nothing');
      if (/\.createTokenReview\(/.test(authenticator)) used.add('*|authentication.k8s.io/tokenreviews:create');
      if (/\.createSubjectAccessReview\(/.test(authorizer)) used.add('*|authorization.k8s.io/subjectaccessreviews:create');
      assert.deepEqual([...used].sort(), granted());
    });

    describe('access roles (who may call the API)', () => {
      const accessRole = (name: string): RoleObject => one<RoleObject>('ClusterRole', name);
      /** What a role grants, as `resource:verb` (sub-resources as `scaffolds/logs`). */
      const grantsOf = (name: string): Set<string> => {
        const grants = new Set<string>();
        for (const rule of accessRole(name).rules ?? []) {
          assert.deepEqual(rule.apiGroups, [API_GROUP], `${name}: only the product's API group`);
          assert.equal(rule.resourceNames, undefined);
          for (const field of [rule.resources, rule.verbs]) assert.ok(!(field ?? []).includes('*'), `${name}: no wildcard`);
          for (const resource of rule.resources ?? []) for (const verb of rule.verbs) grants.add(`${resource}:${verb}`);
        }
        return grants;
      };
      /** What the routes need (src/http/route-permissions.ts), as `resource:verb`; /metrics is not a product resource. */
      const needed = new Set(
        Object.values(ROUTE_PERMISSIONS).flatMap((p) =>
          'resource' in p ? [`${p.resource}${p.subresource === undefined ? '' : `/${p.subresource}`}:${p.verb}`] : [],
        ),
      );

      it('admin grants exactly what the routes need; nothing a route does not check', () => {
        assert.deepEqual([...grantsOf('gitops-scaffolder-admin')].sort(), [...needed].sort());
      });

      it('viewer ⊂ operator ⊂ admin; the viewer only reads, the operator changes no cluster', () => {
        const [viewer, operator, admin] = ACCESS_ROLES.map(grantsOf) as [Set<string>, Set<string>, Set<string>];
        for (const grant of viewer) assert.ok(operator.has(grant), `operator has ${grant}`);
        for (const grant of operator) assert.ok(admin.has(grant), `admin has ${grant}`);
        assert.ok(
          [...viewer].every((g) => /:(get|list)$/.test(g)),
          [...viewer].join(),
        );
        assert.ok(![...operator].some((g) => /^clusters:(update|delete)$/.test(g)));
        assert.ok(operator.has('scaffolds:create'));
      });

      it('binds host-cluster-controller, the typical caller, to the operator role (and nothing else)', () => {
        const bound = objects.filter((o): o is BindingObject => o.kind === 'ClusterRoleBinding' && ACCESS_ROLES.includes((o as BindingObject).roleRef.name));
        assert.deepEqual(
          bound.map((b) => [b.roleRef.name, b.subjects]),
          [['gitops-scaffolder-operator', [{ kind: 'ServiceAccount', name: 'host-cluster-controller', namespace: CORE_NS }]]],
        );
      });
    });

    it('binds nothing to the runner ServiceAccount and mounts no token for it', () => {
      const runner = one<K8sObject & { automountServiceAccountToken?: boolean }>('ServiceAccount', 'scaffold-runner', JOB_NS);
      assert.equal(runner.automountServiceAccountToken, false);
      for (const binding of bindings()) assert.ok(!(binding.subjects ?? []).some((s) => s.name === 'scaffold-runner'));
    });
  });

  describe('Deployment', () => {
    it('runs the service as its ServiceAccount, non-root, with a read-only root filesystem and nothing extra', () => {
      const pod = deployment().spec.template.spec;
      assert.equal(pod.serviceAccountName, SERVICE_ACCOUNT.name);
      assert.notEqual(pod.automountServiceAccountToken, false, 'the service needs its token for the Kubernetes API');
      assert.equal(pod.hostNetwork, undefined);
      assert.equal(pod.hostPID, undefined);
      assert.equal(pod.initContainers, undefined);
      assert.equal(pod.securityContext?.runAsNonRoot, true);
      assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
      const c = container().securityContext;
      assert.equal(c?.runAsNonRoot, true);
      assert.ok((c?.runAsUser ?? pod.securityContext?.runAsUser ?? 0) > 0, 'a non-zero uid');
      assert.equal(c?.readOnlyRootFilesystem, true);
      assert.equal(c?.allowPrivilegeEscalation, false);
      assert.notEqual(c?.privileged, true);
      assert.deepEqual(c?.capabilities, { drop: ['ALL'] });
      assert.equal(c?.seccompProfile?.type, 'RuntimeDefault');
      // The one writable place: an emptyDir on /tmp (DATA_DIR lives under it).
      const mounts = container().volumeMounts ?? [];
      assert.deepEqual(
        mounts.map((m) => m.mountPath),
        ['/tmp'],
      );
      assert.ok(pod.volumes?.find((v) => v.name === mounts[0]?.name)?.emptyDir, '/tmp is an emptyDir');
      assert.ok((pod.topologySpreadConstraints ?? []).length > 0, 'spreads its pods');
    });

    it('pins the images by tag to this release, and runs jobs with the runner image (not the service image)', async () => {
      const version = (JSON.parse(await source('package.json')) as { version: string }).version;
      const image = container().image;
      const runnerImage = container().env?.find((e) => e.name === 'SCAFFOLD_RUNNER_IMAGE')?.value ?? '';
      for (const ref of [image, runnerImage]) assert.match(ref, /^[^@\s]+:[\w][\w.-]*$/, `${ref} is pinned by a tag`);
      assert.equal(image.split(':').at(-1), version);
      assert.equal(runnerImage.split(':').at(-1), version);
      assert.notEqual(runnerImage.split(':')[0], image.split(':')[0], 'the service image runs `serve`, not scaffold-runner');
    });

    it('sets only variables src/service/service-config.ts (or, for the forge token, src/main.ts) reads, and the service accepts them', async () => {
      const config = await source('src/service/service-config.ts');
      const env = container().env ?? [];
      assert.equal(container().envFrom, undefined, 'every variable is listed explicitly');
      const forgeEnv = SERVICE_FORGE_ENV_NAMES;
      for (const { name } of env)
        if (!forgeEnv.includes(name)) assert.match(config, new RegExp(`^ {2}${name}: `, 'm'), `${name} is a key of the service's environment schema`);
      assert.equal(new Set(env.map((e) => e.name)).size, env.length, 'no variable is set twice');

      const database = env.find((e) => e.name === 'DATABASE_URL');
      assert.equal(database?.value, undefined, 'DATABASE_URL carries a password: it comes from a Secret');
      assert.deepEqual(database?.valueFrom, { secretKeyRef: { name: 'gitops-scaffolder-database', key: 'url' } });
      assert.ok(!env.some((e) => e.name === 'API_TOKENS'), 'static tokens are for embedded mode');

      const literal = Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
      const loaded = loadServiceConfig(
        { ...literal, DATABASE_URL: 'postgresql://scaffolder@postgres.example:5432/scaffolder', KUBERNETES_SERVICE_HOST: '10.0.0.1' },
        '/',
      );
      assert.equal(loaded.executor, 'kubernetes');
      assert.equal(loaded.authMode, 'tokenreview');
      assert.equal(loaded.jobNamespace, JOB_NS);
      assert.equal(loaded.referenceEnvironment, 'development');
      // No allow-list: RBAC (access-roles.yaml) decides who may do what.
      assert.deepEqual(loaded.allowedServiceAccounts, []);
      assert.ok(loaded.dataDir.startsWith('/tmp/'), 'DATA_DIR is on the writable emptyDir');
      assert.equal(loaded.port, container().ports?.find((p) => p.name === 'http')?.containerPort);
      assert.equal(loaded.runnerImage, literal['SCAFFOLD_RUNNER_IMAGE']);
    });

    it("takes the service's forge token from an optional Secret, so the service starts (pushing only) until an operator creates it with the API URL", async () => {
      const env = container().env ?? [];
      const token = env.find((e) => e.name === SERVICE_FORGE_ENV.token);
      assert.equal(token?.value, undefined, 'the token is never a literal');
      assert.deepEqual(token?.valueFrom, { secretKeyRef: { name: 'gitops-scaffolder-forge', key: 'token', optional: true } });
      // The API URL is the operator's to set with the Secret (deploy/README.md): none in the base.
      assert.equal(
        env.find((e) => e.name === SERVICE_FORGE_ENV.apiUrl),
        undefined,
      );
      const literal = Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
      assert.deepEqual(await serviceForgeAuth(literal), {}, 'without the Secret: no forge credentials, and no error');
      await assert.rejects(
        serviceForgeAuth({ ...literal, [SERVICE_FORGE_ENV.token]: 'from-the-secret' }),
        /SCAFFOLD_FORGE_API_URL/,
        'the Secret without the API URL stops the service with a message naming it',
      );
    });

    it("runs runner pods as the base's scaffold-runner ServiceAccount in the Job namespace, which is also the default", () => {
      const env = container().env ?? [];
      const name = env.find((e) => e.name === 'SCAFFOLD_RUNNER_SERVICE_ACCOUNT')?.value;
      assert.equal(name, 'scaffold-runner');
      one('ServiceAccount', name, JOB_NS);
      const loaded = loadServiceConfig({ API_TOKENS: 'a-static-token-of-16+chars' }, '/');
      assert.equal(loaded.runnerServiceAccount, name, 'the default matches the base');
      assert.equal(
        loaded.runnerImage.split(':')[0],
        env.find((e) => e.name === 'SCAFFOLD_RUNNER_IMAGE')?.value?.split(':')[0],
        'the default runner image is the runner image',
      );
    });

    it('probes /healthz on the http port and sets resources', () => {
      const c = container();
      for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) assert.deepEqual(probe?.httpGet, { path: '/healthz', port: 'http' });
      for (const key of ['cpu', 'memory']) assert.ok(c.resources?.requests?.[key], `requests.${key}`);
      assert.ok(c.resources?.limits?.memory, 'limits.memory');
    });
  });

  describe('Service, NetworkPolicy, PodDisruptionBudget', () => {
    it('exposes port 80 named http on the container port 8080', () => {
      const service = one<K8sObject & { spec: { type: string; selector: Record<string, string>; ports: Json[] } }>('Service', 'gitops-scaffolder', CORE_NS);
      assert.equal(service.spec.type, 'ClusterIP');
      assert.ok(matches(service.spec.selector, deployment().spec.template.metadata.labels));
      assert.deepEqual(service.spec.ports, [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
      assert.deepEqual(container().ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
      assert.ok(matches(deployment().spec.selector.matchLabels, deployment().spec.template.metadata.labels));
    });

    it('admits traffic to the service only from kubeopera-core, on 8080', () => {
      const policy = one<K8sObject & { spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: unknown } }>(
        'NetworkPolicy',
        'gitops-scaffolder',
        CORE_NS,
      );
      assert.ok(matches(policy.spec.podSelector.matchLabels, deployment().spec.template.metadata.labels));
      // Egress is limited too (its rules are checked against addresses in install-manifests.test.ts).
      assert.deepEqual(policy.spec.policyTypes, ['Ingress', 'Egress']);
      assert.deepEqual(policy.spec.ingress, [
        { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': CORE_NS } } }], ports: [{ protocol: 'TCP', port: 8080 }] },
      ]);
    });

    it('admits no traffic at all to runner pods (selected by the label the executor sets)', async () => {
      const executor = await executorSource();
      assert.match(executor, /\[NAME_LABEL\]: 'scaffold-runner'/);
      assert.match(executor, /const NAME_LABEL = 'app\.kubernetes\.io\/name'/);
      const policy = one<K8sObject & { spec: Json }>('NetworkPolicy', 'scaffold-runner', JOB_NS);
      assert.deepEqual(policy.spec['podSelector'], { matchLabels: { 'app.kubernetes.io/name': 'scaffold-runner' } });
      assert.deepEqual(policy.spec['policyTypes'], ['Ingress', 'Egress']);
      assert.equal(policy.spec['ingress'], undefined, 'Ingress with no rule: nothing is admitted');
    });

    it('has a disruption budget for the service pods that never blocks a drain', () => {
      const pdb = one<K8sObject & { spec: { selector: { matchLabels: Record<string, string> }; minAvailable?: number; maxUnavailable?: number } }>(
        'PodDisruptionBudget',
        'gitops-scaffolder',
        CORE_NS,
      );
      assert.ok(matches(pdb.spec.selector.matchLabels, deployment().spec.template.metadata.labels));
      const replicas = deployment().spec.replicas ?? 1;
      if (pdb.spec.minAvailable !== undefined) assert.ok(pdb.spec.minAvailable < replicas);
      else assert.ok((pdb.spec.maxUnavailable ?? 0) >= 1);
    });
  });
});

describe('Dockerfiles', () => {
  const CONTEXT_FILES = new Set(['package.json', 'node_modules', 'dist', 'platform', 'schemas']);
  let bins: Record<string, string>;

  before(async () => {
    bins = (JSON.parse(await source('package.json')) as { bin: Record<string, string> }).bin;
  });

  for (const [file, bin, build] of [
    ['Dockerfile', 'gitops-scaffolder', 'npm run build'],
    // The runner image runs only the runner's bundle: it builds nothing else (not the dashboard, whose sources it lacks).
    ['Dockerfile.runner', 'scaffold-runner', 'npm run bundle'],
  ] as const) {
    describe(file, () => {
      let stages: Stage[];
      let final: Stage;

      before(async () => {
        stages = dockerStages(await source(file)).stages;
        final = stages.at(-1)!;
      });

      it(`builds in node:20-bookworm-slim: npm ci, ${build}, npm prune --omit=dev`, () => {
        const stage = stages.find((s) => s.name === 'build');
        assert.ok(stage, 'a stage named build');
        assert.equal(stage.image, 'node:20-bookworm-slim');
        const runs = instructionsOf(stage, 'RUN').join('\n');
        const steps = ['npm ci', build, 'npm prune --omit=dev'].map((step) => runs.indexOf(step));
        assert.ok(
          steps.every((at) => at >= 0),
          `runs ${runs}`,
        );
        assert.deepEqual(
          [...steps].sort((a, b) => a - b),
          steps,
          'in this order',
        );
      });

      it(`${build} reads only what the build stage copied in`, async () => {
        const { scripts } = JSON.parse(await source('package.json')) as { scripts: Record<string, string> };
        const command = expandNpmRuns(build, scripts);
        const stage = stages.find((s) => s.name === 'build')!;
        const copied = instructionsOf(stage, 'COPY').flatMap((a) => copyOf(a).sources.map((src) => src.replace(/\/$/, '')));
        const allowList = (await source('.dockerignore'))
          .split('\n')
          .filter((l) => l.startsWith('!'))
          .map((l) => l.slice(1).replace(/\/$/, ''));
        // A build input named in the command (`vite build ui`, `node scripts/bundle.mjs`, `-p tsconfig.build.json`) must be in the stage.
        for (const input of allowList) {
          if (new RegExp(`(^|[\\s=])${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/|\\s|$)`).test(command))
            assert.ok(copied.includes(input), `${file}: \`${build}\` runs \`${command}\`, which reads ${input}: COPY it into the build stage`);
        }
      });

      it(`runs the package's ${bin} bin as a non-root user`, () => {
        assert.ok(final.name !== 'build' && !instructionsOf(final, 'RUN').some((r) => /npm (ci|install)/.test(r)), 'the final stage installs nothing from npm');
        assert.equal(entrypointScript(final), bins[bin]);
        const user = finalUser(final);
        assert.ok(user, 'sets USER');
        const [uid = '', gid = uid] = user.split(':');
        assert.match(uid, /^[1-9][0-9]*$/, 'a numeric non-zero uid (runAsNonRoot can check it)');
        assert.match(gid, /^[1-9][0-9]*$/);
        assert.equal(uid, '65532');
      });

      it('copies only dist/, node_modules, platform/, schemas/ and package.json into the final stage', () => {
        for (const args of instructionsOf(final, 'COPY')) {
          const copy = copyOf(args);
          if (copy.from === 'kubectl') continue;
          for (const src of copy.sources) assert.ok(CONTEXT_FILES.has(posix.basename(src)), `${file}: COPY ${src}`);
        }
        const copied = instructionsOf(final, 'COPY').flatMap((a) => copyOf(a).sources.map((s) => posix.basename(s)));
        // (The service image also takes the dashboard's build output, ui/dist: another `dist`.)
        assert.deepEqual([...new Set(copied.filter((c) => CONTEXT_FILES.has(c)))].sort(), [...CONTEXT_FILES].sort());
      });
    });
  }

  it('the runner image carries git, openssh-client, ca-certificates and a checksum-verified kubectl', async () => {
    const { stages } = dockerStages(await source('Dockerfile.runner'));
    const final = stages.at(-1)!;
    const installs = instructionsOf(final, 'RUN').join('\n');
    for (const pkg of ['git', 'openssh-client', 'ca-certificates']) assert.match(installs, new RegExp(`apt-get install [^\\n]*\\b${pkg}\\b`), pkg);
    assert.ok(instructionsOf(final, 'COPY').some((c) => copyOf(c).from === 'kubectl' && copyOf(c).destination === '/usr/local/bin/kubectl'));

    const kubectl = stages.find((s) => s.name === 'kubectl');
    assert.ok(kubectl, 'a kubectl stage');
    const args = argDefaults(kubectl);
    // The 1.35 line embeds kustomize v5.7, the one verify builds with in tests and CI (closest to Flux 2.9's).
    assert.match(args.get('KUBECTL_VERSION') ?? '', /^v1\.35\.\d+$/);
    assert.ok(args.has('KUBECTL_SHA256'), 'a checksum build argument');
    assert.match(args.get('KUBECTL_SHA256_AMD64') ?? '', /^[0-9a-f]{64}$/);
    const run = instructionsOf(kubectl, 'RUN').join('\n');
    // arm64 is pinned or refused: never downloaded unverified.
    if (!/^[0-9a-f]{64}$/.test(args.get('KUBECTL_SHA256_ARM64') ?? ''))
      assert.match(run, /arm64\)[^;]*;[\s\\]*\[ -n "\$sum" \] \|\| \{ echo [^;]*>&2; exit 1; \}/);
    assert.match(run, /https:\/\/dl\.k8s\.io\/release\/\$\{KUBECTL_VERSION\}\/bin\/linux\/\$\{arch\}\/kubectl/);
    assert.match(run, /sha256sum -c/);
  });

  for (const [file, bundleStep] of [
    ['Dockerfile.runner', 'npm run bundle -- --no-train'],
    // `npm run build` bundles too; with no git or kubectl in the stage it says so and trains nothing.
    ['Dockerfile', 'npm run build'],
  ] as const) {
    it(`${file} trains the runner's code cache where its node, git and kubectl are, before dropping root`, async () => {
      const { stages } = dockerStages(await source(file));
      const build = stages.find((s) => s.name === 'build')!;
      assert.ok(
        instructionsOf(build, 'RUN').some((r) => r.includes(bundleStep)),
        `the build stage bundles (${bundleStep})`,
      );
      assert.ok(!instructionsOf(build, 'RUN').some((r) => /apt-get install[^;]*\b(git|kubectl)\b/.test(r)), 'the build stage has neither git nor kubectl');
      const final = stages.at(-1)!;
      const at = (test: (i: Instruction) => boolean) => final.instructions.findIndex(test);
      const training = at((i) => i.keyword === 'RUN' && /^node \/app\/dist\/bundle\/train-runner-code-cache\.js$/.test(i.args));
      assert.ok(training >= 0, 'the final stage runs the trainer of the bundle it ships');
      assert.ok(at((i) => i.keyword === 'COPY' && copyOf(i.args).from === 'kubectl') < training, 'after kubectl is in');
      assert.ok(at((i) => i.keyword === 'COPY' && copyOf(i.args).sources.includes('platform')) < training, 'after the platform it scaffolds is in');
      assert.ok(training < at((i) => i.keyword === 'USER'), 'as root: the cache lands beside the root-owned code');
    });
  }

  it('the runner image user is the uid the executor runs runner pods as', async () => {
    const executor = await executorSource();
    const uid = /const RUNNER_UID = (\d+);/.exec(executor)?.[1];
    const { stages } = dockerStages(await source('Dockerfile.runner'));
    assert.equal(finalUser(stages.at(-1)!)?.split(':')[0], uid);
  });

  it('the service image user is the uid the Deployment runs as, and it listens where the Deployment expects', async () => {
    const deployment = parseAllDocuments(await source('deploy/base/deployment.yaml'))[0]!.toJS() as DeploymentObject;
    const { stages } = dockerStages(await source('Dockerfile'));
    const final = stages.at(-1)!;
    assert.equal(finalUser(final)?.split(':')[0], String(deployment.spec.template.spec.securityContext?.runAsUser));
    assert.deepEqual(instructionsOf(final, 'EXPOSE'), [String(deployment.spec.template.spec.containers[0]?.ports?.[0]?.containerPort)]);
  });

  it('.dockerignore is an allow-list holding every build input and no local state', async () => {
    const lines = (await source('.dockerignore'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    assert.equal(lines[0], '*', 'everything is excluded first');
    const allowed = new Set(lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, '')));
    for (const file of ['Dockerfile', 'Dockerfile.runner']) {
      const { stages } = dockerStages(await source(file));
      for (const stage of stages) {
        for (const args of instructionsOf(stage, 'COPY')) {
          const copy = copyOf(args);
          if (copy.from !== undefined) continue;
          for (const src of copy.sources) assert.ok(allowed.has(src.replace(/\/$/, '')), `${file}: COPY ${src} is in the build context`);
        }
      }
    }
    for (const never of ['.git', 'node_modules', 'dist', 'test', '.gitops-scaffolder', 'deploy']) assert.ok(!allowed.has(never), `${never} stays out`);
  });
});
