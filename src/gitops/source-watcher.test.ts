import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { renderFluxInstance } from './flux-instance.js';
import { fluxInstanceSpecSchema } from './platform-descriptor.js';
import { memoryRepoReader } from './repo-reader.js';
import { sourcesFromExternalArtifact, treeSourcesFromExternalArtifact } from './source-watcher.js';

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
const render = (fluxInstance: unknown, externalArtifacts: boolean) =>
  parse(
    renderFluxInstance(fluxInstanceSpecSchema.parse(fluxInstance), {
      clusterName: 'c1',
      syncUrl: 'https://git.example.net/platform/gitops.git',
      externalArtifacts,
    }).yaml,
  ) as { spec: { components: string[] } };

describe('source-watcher where the tree uses ExternalArtifacts', () => {
  it('is added to the components when a Kustomization sources from an ExternalArtifact, and only then, valid against the FluxInstance CRD', async () => {
    const object = render({}, true);
    assert.deepEqual(object.spec.components, ['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller', 'source-watcher']);
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    assert.ok(!render({}, false).spec.components.includes('source-watcher'));
    assert.equal(
      render({ components: ['source-controller', 'kustomize-controller', 'source-watcher'] }, true).spec.components.filter((c) => c === 'source-watcher')
        .length,
      1,
    );
  });

  it('is refused with a distribution range that admits a Flux older than 2.7, which has no source-watcher', () => {
    const refused = (error: unknown) =>
      error instanceof ValidationError &&
      error.issues[0]!.field === 'fluxInstance.distribution.version' &&
      /source-watcher ships with Flux from 2\.7/.test(error.message);
    assert.throws(() => render({ distribution: { version: '2.6.x' } }, true), refused);
    assert.throws(
      () => render({ distribution: { version: '>=2.5.0' }, components: ['source-controller', 'kustomize-controller', 'source-watcher'] }, false),
      refused,
    );
    assert.ok(render({ distribution: { version: '2.7.x' } }, true).spec.components.includes('source-watcher'));
    assert.doesNotThrow(() => render({ distribution: { version: '2.6.x' } }, false), 'not needed: nothing to refuse');
  });

  it('recognises a Flux Kustomization sourcing from an ExternalArtifact among YAML documents', () => {
    const kustomization = (kind: string) =>
      `apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\nspec:\n  sourceRef: {kind: ${kind}, name: apps}\n`;
    assert.equal(sourcesFromExternalArtifact(`${kustomization('GitRepository')}---\n${kustomization('ExternalArtifact')}`), true);
    assert.equal(sourcesFromExternalArtifact(kustomization('GitRepository')), false);
    assert.equal(sourcesFromExternalArtifact('apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n'), false);
    assert.equal(sourcesFromExternalArtifact('{{ not yaml'), false);
  });

  it("finds one in a catalog layer's shared directory, but not in another cluster's directory the render does not write", async () => {
    const external =
      'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: tenants}\nspec:\n  sourceRef: {kind: ExternalArtifact, name: tenants}\n';
    const reader = memoryRepoReader(
      new Map([
        ['env-app/kustomization.yaml', 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [tenants.yaml]\n'],
        ['env-app/tenants.yaml', external],
        ['clusters/other/flux/tenants.yaml', external],
      ]),
    );
    assert.equal(await treeSourcesFromExternalArtifact(reader, [], ['env-app']), true);
    assert.equal(await treeSourcesFromExternalArtifact(reader, [], ['platform', 'clusters/other/flux']), false);
    assert.equal(await treeSourcesFromExternalArtifact(reader, [external], []), true);
  });
});
