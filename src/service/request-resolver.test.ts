import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError, UnavailableError } from '../errors.js';
import type { CatalogSource } from './catalog-source.js';
import { RequestResolver } from './request-resolver.js';
import type { ScaffoldRequest } from './scaffold-request.js';

const REQUEST: ScaffoldRequest = {
  cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
  repository: { url: 'https://git.example.net/platform/gitops.git', branch: 'main' },
  secrets: { kubeconfig: { kind: 'secretRef', namespace: 'kubeopera-provisioning', name: 'eu-prod-1-kubeconfig', key: 'value' } },
};

/** A catalog source that fails as the test says. */
const failingWith = (error: Error): CatalogSource => ({ catalog: () => Promise.reject(error) });

describe('RequestResolver: the catalog check', () => {
  it("refuses a request at once when the branch's scaffold.yaml is invalid: every run against it would fail", async () => {
    const message = 'scaffold.yaml of branch main is invalid: attributes[0].name: unknown attribute';
    const resolver = new RequestResolver({ reference: 'development', catalogSource: failingWith(new ConflictError(message)) });
    await assert.rejects(resolver.resolve(REQUEST), (error: unknown) => error instanceof ConflictError && error.message === message);
  });

  it('lets a request through when the catalog cannot be read now: its attributes are checked when the run renders', async () => {
    const resolver = new RequestResolver({ reference: 'development', catalogSource: failingWith(new UnavailableError('the repository cannot be read')) });
    const resolved = await resolver.resolve(REQUEST);
    assert.deepEqual(resolved, { cluster: REQUEST.cluster, repositoryUrl: 'https://git.example.net/platform/gitops.git', branch: 'main' });
  });
});
