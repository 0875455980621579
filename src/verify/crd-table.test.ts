import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import { defaultCrdSchemaDir, shippedCrdKinds, shippedCrdTablePath } from '../kustomize/crd-schema-dir.js';
import { crdTableOf, crdTableText } from './crd-table.js';
import { SchemaValidator } from './schema-validator.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';

describe('the shipped CRD table (schemas/crd-table.json)', () => {
  it('holds what schemas/crds does (after adding or upgrading a CRD there: npm run crd-table)', async () => {
    const files = await crdTableOf(new FsRepoReader(defaultCrdSchemaDir()));
    assert.ok(Object.keys(files).length >= 20);
    assert.deepEqual(await shippedCrdKinds(), files, 'schemas/crd-table.json is not what schemas/crds holds: run npm run crd-table');
    // Byte for byte what the script writes, so running it on an unchanged directory changes nothing.
    assert.equal(await readFile(shippedCrdTablePath(), 'utf8'), crdTableText({ source: 'schemas/crds', kinds: files }));
  });

  it('gives a validator fed from it the verdicts of one reading the YAML files', async () => {
    const fromTable = new SchemaValidator({ schemas: shippedCrdKinds, coreKinds: new CoreKindValidator() });
    const fromFiles = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
    const objects = [
      {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: 'a' },
        spec: { interval: '10 minutes', prune: 'yes', path: './x' },
      },
      { apiVersion: 'kustomize.toolkit.fluxcd.io/v1beta1', kind: 'Kustomization', metadata: { name: 'a' }, spec: {} },
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'ClusterIssuer',
        metadata: { name: 'le' },
        spec: { acme: { server: 'https://acme.example', privateKeySecretRef: { name: 'k' }, solverz: [] } },
      },
      { apiVersion: 'bitnami.com/v1alpha1', kind: 'SealedSecret', metadata: { name: 's' }, spec: { encryptedData: { a: 'b' } } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replica: 2 } },
    ];
    for (const object of objects) assert.deepEqual(await fromTable.validate(object), await fromFiles.validate(object), JSON.stringify(object));
    const issues = await fromTable.validate(objects[2]);
    assert.ok(issues.status === 'checked' && issues.issues.some((issue) => issue.field === 'spec.acme.solverz'), JSON.stringify(issues));
  });

  it('keeps the first definition of a kind two files define, as the validator reading the files does', async () => {
    const dir = defaultCrdSchemaDir();
    const sealed = await readFile(`${dir}/bitnami.com_sealedsecrets.yaml`, 'utf8');
    const unserved = sealed.replace(/served: true/g, 'served: false');
    assert.notEqual(unserved, sealed);
    const kinds = await crdTableOf(
      memoryRepoReader(
        new Map([
          ['a.yaml', sealed],
          ['b.yaml', unserved],
          ['notes.md', 'kind: CustomResourceDefinition'],
        ]),
      ),
    );
    assert.deepEqual(Object.keys(kinds), ['bitnami.com/SealedSecret']);
    assert.equal(kinds['bitnami.com/SealedSecret']?.['v1alpha1']?.served, true);
  });
});
