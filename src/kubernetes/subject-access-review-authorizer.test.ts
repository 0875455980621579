/**
 * The SubjectAccessReview authorizer's cache, against a loopback API server that
 * decides by the review it receives: a decision is remembered for exactly the
 * user (with their groups) and the action it was asked about, and only for the
 * TTL, so one caller's allow is never another's and a revoked binding stops
 * working once the TTL has passed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig, type V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import { ForbiddenError } from '../errors.js';
import { SubjectAccessReviewAuthorizer } from './subject-access-review-authorizer.js';

describe('SubjectAccessReviewAuthorizer', () => {
  let server: Server;
  let kubeConfig: KubeConfig;
  /** Decides each review; reviews records every spec the server received. */
  let decide: (spec: V1SubjectAccessReviewSpec) => boolean;
  const reviews: V1SubjectAccessReviewSpec[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { spec: V1SubjectAccessReviewSpec };
        reviews.push(body.spec);
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...body, status: { allowed: decide(body.spec) } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'host', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'service', token: 'service-account-token' }],
      contexts: [{ name: 'host', cluster: 'host', user: 'service' }],
      currentContext: 'host',
    });
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    reviews.length = 0;
  });

  const create = { resource: 'scaffolds', verb: 'create' } as const;

  it('asks about exactly the caller: user, groups, uid and extra, on a cluster-scoped resource of its API group', async () => {
    decide = () => true;
    const authorizer = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 0 });
    await authorizer.authorize({ identity: 'alice', groups: ['platform'], uid: 'u-1', extra: { scopes: ['a'] } }, { ...create, name: 'run-1' });
    assert.deepEqual(reviews, [
      {
        user: 'alice',
        groups: ['platform'],
        uid: 'u-1',
        extra: { scopes: ['a'] },
        resourceAttributes: { group: 'gitops-scaffolder.io', resource: 'scaffolds', verb: 'create', name: 'run-1' },
      },
    ]);
  });

  it("never answers one caller with another's cached decision", async () => {
    decide = (spec) => spec.user === 'alice' && (spec.groups ?? []).includes('platform');
    const authorizer = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 60_000 });
    await authorizer.authorize({ identity: 'alice', groups: ['platform'] }, create);
    await assert.rejects(authorizer.authorize({ identity: 'mallory', groups: ['platform'] }, create), ForbiddenError);
    // The same user without the group the allow came through is asked about again.
    await assert.rejects(authorizer.authorize({ identity: 'alice', groups: [] }, create), ForbiddenError);
    // Another action is another question.
    decide = (spec) => spec.resourceAttributes?.verb !== 'delete';
    await assert.rejects(authorizer.authorize({ identity: 'alice', groups: ['platform'] }, { resource: 'scaffolds', verb: 'delete' }), ForbiddenError);
    // Alice's own decision is remembered: no new review for it.
    const asked = reviews.length;
    await authorizer.authorize({ identity: 'alice', groups: ['platform'] }, create);
    assert.equal(reviews.length, asked);
  });

  it('forgets a decision once the TTL has passed: a revoked binding stops working', async (t) => {
    // The clock is the test's: a slow machine cannot make "within the TTL" late.
    let now = Date.now();
    t.mock.method(Date, 'now', () => now);
    decide = () => true;
    const authorizer = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 1000 });
    await authorizer.authorize({ identity: 'alice' }, create);
    decide = () => false;
    now += 999;
    await authorizer.authorize({ identity: 'alice' }, create); // still within the TTL
    assert.equal(reviews.length, 1);
    now += 2;
    await assert.rejects(authorizer.authorize({ identity: 'alice' }, create), ForbiddenError);
    assert.equal(reviews.length, 2);
  });

  it('with a TTL of 0 asks every time', async () => {
    decide = () => true;
    const authorizer = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 0 });
    await authorizer.authorize({ identity: 'alice' }, create);
    decide = () => false;
    await assert.rejects(authorizer.authorize({ identity: 'alice' }, create), ForbiddenError);
    assert.equal(reviews.length, 2);
  });
});
