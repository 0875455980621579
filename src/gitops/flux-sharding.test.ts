import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { renderFluxInstance } from './flux-instance.js';
import { assertShardLayers, fluxShardingSchema, labelForShard, shardOfLayer } from './flux-sharding.js';
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
});
