import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { KubectlKustomize } from '../kustomize/kubectl-kustomize.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { renderFluxInstance } from './flux-instance.js';
import { fluxMinorFloor, type FluxInstancePatch } from './flux-tuning.js';
import { fluxInstanceSpecSchema } from './platform-descriptor.js';

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
const CONTROLLERS = ['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller'];

type Instance = { spec: { kustomize?: { patches: FluxInstancePatch[] } } };
function instance(fluxInstance: unknown): Instance {
  const spec = fluxInstanceSpecSchema.parse(fluxInstance);
  return parse(renderFluxInstance(spec, { clusterName: 'c1', syncUrl: 'https://git.example.net/platform/gitops.git' }).yaml) as Instance;
}

/** A Deployment shaped like the operator's: the controller's own flags first. */
function controllerDeployment(name: string): string {
  return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  namespace: flux-system\nspec:\n  selector:\n    matchLabels: { app: ${name} }\n  template:\n    metadata:\n      labels: { app: ${name} }\n    spec:\n      containers:\n        - name: manager\n          image: ghcr.io/fluxcd/${name}:v1\n          args: [--events-addr=http://notification-controller.flux-system.svc.cluster.local./, --watch-all-namespaces=true]\n`;
}

describe('Flux tuned through the FluxInstance', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'flux-tuning-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** The controllers' args after kustomize applies the FluxInstance's patches, as the operator does, to Deployments of their shape. */
  async function argsAfterPatches(patches: readonly FluxInstancePatch[]): Promise<Record<string, string[]>> {
    const dir = await mkdtemp(join(tmp, 'build-'));
    await mkdir(join(dir, 'flux'));
    for (const name of CONTROLLERS) await writeFile(join(dir, 'flux', `${name}.yaml`), controllerDeployment(name));
    const kustomization = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: CONTROLLERS.map((n) => `${n}.yaml`), patches };
    await writeFile(join(dir, 'flux', 'kustomization.yaml'), JSON.stringify(kustomization));
    const built = await new KubectlKustomize().build(dir, 'flux');
    const out: Record<string, string[]> = {};
    for (const doc of parseAllDocuments(built)) {
      const object = doc.toJS() as { metadata: { name: string }; spec: { template: { spec: { containers: { args: string[] }[] } } } };
      out[object.metadata.name] = object.spec.template.spec.containers[0]!.args.slice(2);
    }
    return out;
  }

  it('by default gives source- and kustomize-controller more workers, requeues dependencies every 10s and cancels stale health checks, as real kustomize applies it', async () => {
    const object = instance({});
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    assert.deepEqual(await argsAfterPatches(object.spec.kustomize!.patches), {
      'source-controller': ['--concurrent=10'],
      'kustomize-controller': ['--concurrent=6', '--requeue-dependency=10s', '--feature-gates=CancelHealthCheckOnNewRevision=true'],
      'helm-controller': ['--feature-gates=CancelHealthCheckOnNewRevision=true'],
      'notification-controller': [],
    });
  });

  it('sets the gate only on controllers the version range guarantees have it, and refuses to require it where one may not', async () => {
    const gates = (fluxInstance: unknown) =>
      (instance(fluxInstance).spec.kustomize?.patches ?? []).filter((p) => p.patch.includes('CancelHealthCheckOnNewRevision')).map((p) => p.target.name);
    assert.deepEqual(gates({ distribution: { version: '2.8.x' } }), ['kustomize-controller', 'helm-controller']);
    assert.deepEqual(gates({ distribution: { version: '2.7.x' } }), ['kustomize-controller'], 'helm-controller has the gate from Flux 2.8');
    assert.deepEqual(gates({ distribution: { version: '2.6.x' } }), []);
    assert.deepEqual(gates({ tuning: { cancelHealthCheckOnNewRevision: false } }), []);
    assert.throws(
      () => instance({ distribution: { version: '2.7.x' }, tuning: { cancelHealthCheckOnNewRevision: true } }),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.issues[0]!.field === 'fluxInstance.tuning.cancelHealthCheckOnNewRevision' &&
        /helm-controller .* Flux 2\.8/.test(error.message),
    );
    assert.deepEqual(
      gates({
        distribution: { version: '2.7.x' },
        components: ['source-controller', 'kustomize-controller'],
        tuning: { cancelHealthCheckOnNewRevision: true },
      }),
      ['kustomize-controller'],
      'no helm-controller installed: nothing to refuse',
    );
  });

  it("patches only installed controllers, takes the descriptor's numbers, and writes no patch when tuning is off", async () => {
    const object = instance({
      components: ['source-controller', 'kustomize-controller'],
      tuning: { concurrent: { sourceController: 20, kustomizeController: 12 }, requeueDependency: '5s' },
    });
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    const args = await argsAfterPatches(object.spec.kustomize!.patches);
    assert.deepEqual(args['source-controller'], ['--concurrent=20']);
    assert.deepEqual(args['kustomize-controller'], ['--concurrent=12', '--requeue-dependency=5s', '--feature-gates=CancelHealthCheckOnNewRevision=true']);
    assert.deepEqual(args['helm-controller'], []);
    assert.equal(instance({ tuning: { enabled: false } }).spec.kustomize, undefined);
    assert.throws(() => fluxInstanceSpecSchema.parse({ tuning: { requeueDependency: 'soon' } }));
    assert.throws(() => fluxInstanceSpecSchema.parse({ tuning: { concurrent: { sourceController: 0 } } }));
  });

  it('reads the lowest Flux minor a version range admits', () => {
    const cases: [string, number | undefined][] = [
      ['2.x', undefined],
      ['*', undefined],
      ['2.8.x', 8],
      ['2.8.1', 8],
      ['>=2.7.0', 7],
      ['~2.6', 6],
      ['^2.8', 8],
      ['3.0.x', Number.POSITIVE_INFINITY],
    ];
    for (const [range, minor] of cases) assert.equal(fluxMinorFloor(range), minor, range);
  });
});
