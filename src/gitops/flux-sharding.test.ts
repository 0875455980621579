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
import { assertShardLayers, fluxShardingSchema, labelForShard, shardOfLayer } from './flux-sharding.js';
import type { FluxInstancePatch } from './flux-tuning.js';
import { fluxInstanceSpecSchema, parsePlatformDescriptor } from './platform-descriptor.js';

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
const render = (fluxInstance: unknown) =>
  parse(renderFluxInstance(fluxInstanceSpecSchema.parse(fluxInstance), { clusterName: 'c1', syncUrl: 'https://git.example.net/platform/gitops.git' }).yaml) as {
    spec: Record<string, unknown>;
  };
const refusal = (field: string, message: RegExp) => (error: unknown) =>
  error instanceof ValidationError && error.issues.some((i) => i.field === field && message.test(i.message));

describe('Flux sharding', () => {
  it('renders spec.sharding with the default key, valid against the FluxInstance CRD, and none by default', async () => {
    const object = render({ enabled: true, sharding: { shards: ['apps'] } });
    assert.deepEqual(object.spec.sharding, { key: 'sharding.fluxcd.io/key', shards: ['apps'] });
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    assert.equal(render({}).spec.sharding, undefined);
  });

  it('refuses sharding without the Flux Operator, naming the field', () => {
    assert.throws(
      () => parsePlatformDescriptor('fluxInstance:\n  enabled: false\n  sharding:\n    shards: [apps]\n'),
      refusal('scaffold.yaml.fluxInstance.sharding', /needs the Flux Operator \(fluxInstance\.enabled: true\): flux bootstrap installs no shard controllers/),
    );
  });

  it('refuses a layer assigned to a shard that is not listed, a duplicate shard, and a shard name that is no DNS label', () => {
    const issues = (sharding: unknown) => {
      const result = fluxShardingSchema.safeParse(sharding);
      return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    assert.deepEqual(issues({ shards: ['apps'], layers: { 'env-app': 'app' } }), [
      'layers.env-app: "app" is not one of shards (apps): nobody would reconcile the layer',
    ]);
    assert.deepEqual(issues({ shards: ['apps', 'apps'] }), ['shards.1: "apps" is listed twice']);
    assert.equal(issues({ shards: ['Apps'] }).length, 1);
    assert.equal(issues({ shards: [] }).length, 1);
  });

  it('sends the layer named like a shard to it unless layers says otherwise, and checks the assignment against the platform', () => {
    const byName = fluxShardingSchema.parse({ shards: ['apps'] });
    assert.equal(shardOfLayer(byName, 'apps'), 'apps');
    assert.equal(shardOfLayer(byName, 'infrastructure'), undefined);
    const mapped = fluxShardingSchema.parse({ shards: ['apps'], layers: { 'env-app': 'apps' } });
    assert.equal(shardOfLayer(mapped, 'env-app'), 'apps');
    assert.equal(shardOfLayer(mapped, 'apps'), undefined);
    assertShardLayers(mapped, ['env', 'env-app']);
    assert.throws(() => assertShardLayers(mapped, ['env']), refusal('fluxInstance.sharding.layers.env-app', /is not a layer of this platform/));
    assert.throws(() => assertShardLayers(byName, ['env', 'env-app']), refusal('fluxInstance.sharding.shards', /no layer goes to shard "apps"/));
  });

  it('labels a layer Kustomization for its shard, keeping its comments', () => {
    const yaml =
      '# Layer apps.\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps\n';
    const labelled = labelForShard(yaml, 'sharding.fluxcd.io/key', 'apps');
    assert.match(labelled, /^# Layer apps\./);
    assert.deepEqual((parse(labelled) as { metadata: unknown }).metadata, {
      name: 'apps',
      namespace: 'flux-system',
      labels: { 'sharding.fluxcd.io/key': 'apps' },
    });
  });

  describe("the operator's build of a sharded instance, with real kustomize", () => {
    let tmp: string;
    before(async () => {
      tmp = await mkdtemp(join(tmpdir(), 'flux-sharding-'));
    });
    after(async () => {
      await rm(tmp, { recursive: true, force: true });
    });

    const CONTROLLERS = ['source-controller', 'kustomize-controller', 'helm-controller'];
    const deployment = (name: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  selector:\n    matchLabels: { app: ${name} }\n  template:\n    metadata:\n      labels: { app: ${name} }\n    spec:\n      containers:\n        - name: manager\n          image: ghcr.io/fluxcd/${name}:v1\n          args: [--watch-all-namespaces=true]\n`;

    /**
     * The layout flux-operator v0.58.1 builds (internal/builder/templates.go):
     * each shard a sub-kustomization of the controllers with nameSuffix
     * `-<shard>`, the sharding.fluxcd.io/role annotation and the shard's
     * selector; the main controllers excluded from every sharded object by a
     * patch whose annotationSelector skips the shards; the FluxInstance's own
     * patches last, at the top. The shard copies the controllers' files here
     * (the operator refers to them as ../, which the root-only load
     * restriction refuses); kustomize matches a patch target by the name an
     * object had before nameSuffix as well as its current one either way.
     */
    async function argsOfShardedBuild(patches: readonly FluxInstancePatch[], key: string, shard: string): Promise<Record<string, string[]>> {
      const dir = await mkdtemp(join(tmp, 'build-'));
      await mkdir(join(dir, 'flux', shard), { recursive: true });
      for (const name of CONTROLLERS) {
        await writeFile(join(dir, 'flux', `${name}.yaml`), deployment(name));
        await writeFile(join(dir, 'flux', shard, `${name}.yaml`), deployment(name));
      }
      const controllers = `(${CONTROLLERS.join('|')})`;
      const addArg = (value: string) => `- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: ${value}\n`;
      await writeFile(
        join(dir, 'flux', shard, 'kustomization.yaml'),
        JSON.stringify({
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: CONTROLLERS.map((n) => `${n}.yaml`),
          nameSuffix: `-${shard}`,
          commonAnnotations: { 'sharding.fluxcd.io/role': 'shard' },
          patches: [{ target: { kind: 'Deployment', name: controllers }, patch: addArg(`--watch-label-selector=${key}=${shard}`) }],
        }),
      );
      await writeFile(
        join(dir, 'flux', 'kustomization.yaml'),
        JSON.stringify({
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: [...CONTROLLERS.map((n) => `${n}.yaml`), shard],
          patches: [
            {
              target: { kind: 'Deployment', name: controllers, annotationSelector: '!sharding.fluxcd.io/role' },
              patch: addArg(`--watch-label-selector=!${key}`),
            },
            ...patches,
          ],
        }),
      );
      const out: Record<string, string[]> = {};
      for (const doc of parseAllDocuments(await new KubectlKustomize().build(dir, 'flux'))) {
        const object = doc.toJS() as { metadata: { name: string }; spec: { template: { spec: { containers: { args: string[] }[] } } } };
        out[object.metadata.name] = object.spec.template.spec.containers[0]!.args.slice(1);
      }
      return out;
    }

    it("splits the controllers by the key, and the shard's controllers get the same tuning as the main ones", async () => {
      const object = render({ enabled: true, sharding: { shards: ['apps'] } }) as {
        spec: { sharding: { key: string }; kustomize: { patches: FluxInstancePatch[] } };
      };
      const args = await argsOfShardedBuild(object.spec.kustomize.patches, object.spec.sharding.key, 'apps');
      const tuned = {
        'source-controller': ['--concurrent=10'],
        'kustomize-controller': ['--concurrent=6', '--requeue-dependency=10s', '--feature-gates=CancelHealthCheckOnNewRevision=true'],
        'helm-controller': ['--feature-gates=CancelHealthCheckOnNewRevision=true'],
      } as const;
      for (const name of CONTROLLERS) {
        assert.deepEqual(args[name], ['--watch-label-selector=!sharding.fluxcd.io/key', ...tuned[name as keyof typeof tuned]], name);
        assert.deepEqual(args[`${name}-apps`], ['--watch-label-selector=sharding.fluxcd.io/key=apps', ...tuned[name as keyof typeof tuned]], `${name}-apps`);
      }
    });
  });
});
