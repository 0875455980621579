/**
 * A cluster page's upgrade and removal, delivered as the operator chose: the
 * requests the two actions send (checked with the service's own request
 * schemas, so what the page sends is what the API accepts), that a push sends
 * no `delivery`, and the confirmation sentences that say how the change will
 * reach the branch.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { removeClusterBodySchema } from '../../src/http/routes/cluster-routes.js';
import { upgradeRequestSchema } from '../../src/http/routes/upgrade-routes.js';
import { deliveryIssues, deliveryRequest, EMPTY_DELIVERY, type DeliveryValues } from '../../ui/src/delivery-values.js';
import { deliveryPhrase, deliveryWording, fleetConfirmation, removalRequest, upgradeRequestBody } from '../../ui/src/fleet-delivery.js';

const PULL_REQUEST: DeliveryValues = { mode: 'pull_request', forge: 'github', autoMerge: false, apiUrl: '' };
const delivery = (values: DeliveryValues) => deliveryRequest(values).delivery;

describe('an upgrade started from the cluster page', () => {
  it('sends no delivery when pushed, and the pull request the operator chose otherwise; the service accepts both', () => {
    const pushed = upgradeRequestBody('eu-prod-1', delivery(EMPTY_DELIVERY));
    assert.deepEqual(pushed, { clusters: ['eu-prod-1'], dry_run: false });
    const requested = upgradeRequestBody('eu-prod-1', delivery({ ...PULL_REQUEST, forge: 'gitlab', autoMerge: true, apiUrl: ' https://gitlab.example.net ' }));
    assert.deepEqual(requested.delivery, { mode: 'pull_request', auto_merge: true, forge: 'gitlab', api_url: 'https://gitlab.example.net' });
    for (const body of [pushed, requested]) {
      const parsed = upgradeRequestSchema.safeParse(body);
      assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
    }
  });

  it('says the commit is pushed, or goes through a pull request on scaffold/<cluster>/upgrade that must be merged', () => {
    assert.equal(deliveryPhrase('upgrade', 'eu-prod-1', EMPTY_DELIVERY), 'pushed straight to the branch');
    assert.equal(deliveryPhrase('upgrade', 'eu-prod-1', PULL_REQUEST), 'through a pull request on scaffold/eu-prod-1/upgrade that must be merged');
    assert.equal(
      deliveryPhrase('upgrade', 'eu-prod-1', { ...PULL_REQUEST, autoMerge: true }),
      'through a pull request on scaffold/eu-prod-1/upgrade that must be merged (merged once its checks pass)',
    );
    assert.equal(
      fleetConfirmation('upgrade', 'eu-prod-1', EMPTY_DELIVERY),
      'The upgrade lands as one commit touching only clusters/eu-prod-1/, pushed straight to the branch.',
    );
    assert.match(
      fleetConfirmation('upgrade', 'eu-prod-1', PULL_REQUEST),
      /one commit touching only clusters\/eu-prod-1\/, through a pull request on scaffold\/eu-prod-1\/upgrade that must be merged\./,
    );
  });
});

describe('a removal started from the cluster page', () => {
  it('sends a DELETE with no body when pushed, and a JSON body with the delivery otherwise; the service accepts it', () => {
    const pushed = removalRequest('eu-prod-1', 'eu-prod-1', delivery(EMPTY_DELIVERY));
    assert.deepEqual(pushed, { path: '/api/v1/clusters/eu-prod-1?confirm=eu-prod-1', init: { method: 'DELETE' } });
    const requested = removalRequest('eu-prod-1', 'eu-prod-1', delivery(PULL_REQUEST));
    assert.equal(requested.path, '/api/v1/clusters/eu-prod-1?confirm=eu-prod-1');
    assert.equal(requested.init.method, 'DELETE');
    assert.deepEqual(requested.init.headers, { 'content-type': 'application/json' });
    const body: unknown = JSON.parse(requested.init.body ?? 'null');
    assert.deepEqual(body, { delivery: { mode: 'pull_request', auto_merge: false, forge: 'github' } });
    const parsed = removeClusterBodySchema.safeParse(body);
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
  });

  it('deleting the data sends delete_data with the kubeconfig and no delivery (it is pushed); the service accepts it', () => {
    const kubeconfig = 'apiVersion: v1\nkind: Config\n';
    const request = removalRequest('eu-prod-1', 'eu-prod-1', delivery(PULL_REQUEST), { kubeconfig });
    const body: unknown = JSON.parse(request.init.body ?? 'null');
    assert.deepEqual(body, { delete_data: true, kubeconfig: { inline: kubeconfig } });
    const parsed = removeClusterBodySchema.safeParse(body);
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
  });

  it('repeats what the operator typed as confirm, encoded, so the service compares it with the name', () => {
    assert.equal(removalRequest('eu-prod-1', 'eu prod&1', undefined).path, '/api/v1/clusters/eu-prod-1?confirm=eu+prod%261');
  });

  it('says the removal commit is pushed, or goes through a pull request on scaffold/<cluster>/remove that must be merged', () => {
    assert.match(
      fleetConfirmation('remove', 'eu-prod-1', EMPTY_DELIVERY),
      /^This starts a removal run: one commit that deletes the files the generator wrote under clusters\/eu-prod-1\/, pushed straight to the branch, followed on the run's page\./,
    );
    assert.match(
      fleetConfirmation('remove', 'eu-prod-1', PULL_REQUEST),
      /one commit that deletes the files the generator wrote under clusters\/eu-prod-1\/, through a pull request on scaffold\/eu-prod-1\/remove that must be merged, followed on the run's page\./,
    );
    assert.match(fleetConfirmation('remove', 'eu-prod-1', PULL_REQUEST), /Type the cluster name to confirm\.$/);
  });
});

describe("the actions' delivery choice", () => {
  it('defaults to push and needs a forge for a pull request before anything is sent', () => {
    assert.equal(delivery(EMPTY_DELIVERY), undefined);
    assert.deepEqual([...deliveryIssues({ ...PULL_REQUEST, forge: '' }).keys()], ['delivery-forge']);
    assert.deepEqual(deliveryIssues(PULL_REQUEST), new Map());
  });

  it("words the choice for the action's one commit and names the request's branch", () => {
    const upgrade = deliveryWording('upgrade', 'eu-prod-1');
    assert.equal(upgrade.question, "How the upgrade's commit reaches the branch");
    assert.match(upgrade.pullRequest, /scaffold\/eu-prod-1\/upgrade/);
    assert.match(upgrade.forgeHint, /the service opens the request with its own forge credentials/);
    assert.match(deliveryWording('remove', 'eu-prod-1').pullRequest, /scaffold\/eu-prod-1\/remove/);
    assert.equal(deliveryWording('remove', 'eu-prod-1').question, "How the removal's commit reaches the branch");
  });
});
