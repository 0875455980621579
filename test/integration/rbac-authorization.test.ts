/**
 * Authorization by Kubernetes RBAC, end to end: the HTTP app authenticates each
 * bearer token with TokenReview and authorizes each action with a
 * SubjectAccessReview, both through the real @kubernetes/client-node against
 * the API double, which decides with the ClusterRoles shipped in
 * deploy/base/access-roles.yaml (and the bindings each test adds).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, AuthorizationV1Api, type V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { parseAllDocuments } from 'yaml';
import { PgRunStore } from '../../src/db/pg-run-store.js';
import { ForbiddenError, UnavailableError } from '../../src/errors.js';
import { createHttpApp } from '../../src/http/create-http-app.js';
import { ROUTE_PERMISSIONS, actionOf } from '../../src/http/route-permissions.js';
import { loadKubeConfig } from '../../src/kubernetes/kube-config.js';
import { SubjectAccessReviewAuthorizer } from '../../src/kubernetes/subject-access-review-authorizer.js';
import { TokenReviewAuthenticator } from '../../src/kubernetes/token-review-authenticator.js';
import type { Caller } from '../../src/service/authenticator.js';
import type { RunExecutor } from '../../src/service/run-executor.js';
import { RunService } from '../../src/service/run-service.js';
import type { RbacObject } from '../support/kube-rbac.js';
import { startKubeApiDouble, type KubeApiDouble } from '../support/kube-api-double.js';

const CONTROLLER = 'system:serviceaccount:kubeopera-core:host-cluster-controller';
const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\n';
const SAR_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** Runs start and stay running; nothing here is about execution. */
const executor: RunExecutor = {
  start: async (run) => ({ job: run.job }),
  inspect: async () => ({ state: 'running' }),
  // eslint-disable-next-line require-yield -- a run without output
  logs: async function* () {
    return;
  },
  cancel: async () => undefined,
};

const binding = (name: string, role: string, subject: { kind: string; name: string; namespace?: string }): RbacObject => ({
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { kind: 'ClusterRole', name: role },
  subjects: [subject],
});

/** Which table entries each shipped role allows: the verb table of docs/security.md. */
const VIEWER = [
  'GET /api/v1/scaffolds',
  'GET /api/v1/scaffolds/:id',
  'GET /api/v1/scaffolds/:id/graph',
  'GET /api/v1/scaffolds/:id/logs',
  'GET /api/v1/clusters',
  'GET /api/v1/clusters/:name',
  'GET /api/v1/upgrades',
  'GET /api/v1/upgrades/:id',
];
const OPERATOR = [...VIEWER, 'POST /api/v1/scaffolds', 'GET /api/v1/catalog', 'POST /api/v1/scaffolds/:id/retry', 'POST /api/v1/scaffolds/:id/cancel'];
const ADMIN = [
  ...OPERATOR,
  'DELETE /api/v1/clusters/:name',
  'POST /api/v1/clusters/:name/rotate',
  'POST /api/v1/clusters/:name/sealing-check',
  'POST /api/v1/upgrades',
  'POST /api/v1/upgrades/:id/cancel',
];

describe('RBAC authorization through SubjectAccessReview', () => {
  let double: KubeApiDouble;
  let dir: string;
  let store: PgRunStore;
  let app: FastifyInstance;
  let authorizer: SubjectAccessReviewAuthorizer;
  let clusters = 0;

  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const create = (token: string): Promise<LightMyRequestResponse> => {
    clusters++;
    const body = { cluster: { name: `rbac-${clusters}`, domain: `rbac-${clusters}.example.net`, region: 'eu-west-1' }, kubeconfig: { inline: KUBECONFIG } };
    return app.inject({
      method: 'POST',
      url: '/api/v1/scaffolds',
      headers: { ...as(token), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  };
  const runId = async (): Promise<string> => {
    const created = await create('controller-token');
    assert.equal(created.statusCode, 202, created.body);
    return (created.json() as { id: string }).id;
  };
  const sarsSince = (count: number) => double.requests.slice(count).filter((r) => r.path === SAR_PATH);

  before(async () => {
    double = await startKubeApiDouble();
    dir = await mkdtemp(join(tmpdir(), 'rbac-'));
    const kubeConfig = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir) });
    const shipped = parseAllDocuments(await readFile(new URL('../../deploy/base/access-roles.yaml', import.meta.url), 'utf8')).map(
      (d) => d.toJS() as RbacObject,
    );
    double.applyRbac([
      ...shipped,
      binding('alice-viewer', 'gitops-scaffolder-viewer', { kind: 'User', name: 'alice@example.com' }),
      binding('platform-admins', 'gitops-scaffolder-admin', { kind: 'Group', name: 'oidc:platform-admins' }),
    ]);
    double.setTokenReview('controller-token', {
      authenticated: true,
      user: { username: CONTROLLER, groups: ['system:serviceaccounts', 'system:serviceaccounts:kubeopera-core'] },
    });
    double.setTokenReview('alice-token', { authenticated: true, user: { username: 'alice@example.com', groups: ['oidc:developers'] } });
    double.setTokenReview('bob-token', { authenticated: true, user: { username: 'bob@example.com', groups: ['oidc:platform-admins'] } });
    double.setTokenReview('nobody-token', {
      authenticated: true,
      user: { username: 'system:serviceaccount:default:nobody', groups: ['system:serviceaccounts'] },
    });
    double.setTokenReview('carol-token', { authenticated: true, user: { username: 'carol@example.com' } });

    store = await PgRunStore.open();
    const service = new RunService({
      store,
      executor,
      previewer: { preview: async () => ({ gitopsPath: 'clusters/x', files: [] }) },
      defaultRepository: { ensure: async () => 'file:///srv/gitops.git' },
      reference: 'development',
    });
    authorizer = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 0 });
    app = await createHttpApp({ service, store, authenticator: new TokenReviewAuthenticator({ kubeConfig, cacheTtlMs: 0 }), authorizer });
  });

  after(async () => {
    await app.close();
    await store.close();
    await double.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('host-cluster-controller (bound to gitops-scaffolder-operator) creates a run, polls it, reads its logs, cancels and retries it', async () => {
    const id = await runId();
    assert.equal((await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: as('controller-token') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/logs`, headers: as('controller-token') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: as('controller-token') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'POST', url: `/api/v1/scaffolds/${id}/cancel`, headers: as('controller-token') })).statusCode, 200);
    const retry = await app.inject({
      method: 'POST',
      url: `/api/v1/scaffolds/${id}/retry`,
      headers: { ...as('controller-token'), 'content-type': 'application/json' },
      payload: JSON.stringify({ kubeconfig: { inline: KUBECONFIG } }),
    });
    assert.notEqual(retry.statusCode, 403, retry.body);
  });

  it('asks about exactly the caller (user and groups) and the action (group, resource, verb, name)', async () => {
    const id = await runId();
    const count = double.requests.length;
    await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/logs`, headers: as('alice-token') });
    const [review] = sarsSince(count);
    const spec = (review?.body as { spec: Record<string, unknown> }).spec;
    assert.equal(spec['user'], 'alice@example.com');
    assert.deepEqual(spec['groups'], ['oidc:developers']);
    assert.deepEqual(spec['resourceAttributes'], { group: 'gitops-scaffolder.io', resource: 'scaffolds', subresource: 'logs', verb: 'get', name: id });
  });

  it('a viewer reads runs and logs but cannot create, cancel or retry (403 naming what to grant)', async () => {
    const id = await runId();
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: as('alice-token') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: as('alice-token') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/logs`, headers: as('alice-token') })).statusCode, 200);
    const denied = await create('alice-token');
    assert.equal(denied.statusCode, 403);
    const error = (denied.json() as { error: { code: string; message: string } }).error;
    assert.match(error.message, /alice@example\.com cannot create scaffolds\.gitops-scaffolder\.io/);
    for (const action of ['cancel', 'retry']) {
      const response = await app.inject({ method: 'POST', url: `/api/v1/scaffolds/${id}/${action}`, headers: as('alice-token') });
      assert.equal(response.statusCode, 403, action);
    }
  });

  it('an authenticated caller bound to nothing may do nothing, and is refused before the body is read', async () => {
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: as('nobody-token') })).statusCode, 403);
    const garbage = await app.inject({
      method: 'POST',
      url: '/api/v1/scaffolds',
      headers: { ...as('nobody-token'), 'content-type': 'application/json' },
      payload: '{not json',
    });
    assert.equal(garbage.statusCode, 403, 'authorization happens before parsing');
    assert.equal((await app.inject({ method: 'GET', url: '/metrics', headers: as('nobody-token') })).statusCode, 403);
  });

  it('a group binding applies (an OIDC group bound to gitops-scaffolder-admin)', async () => {
    assert.equal((await create('bob-token')).statusCode, 202);
  });

  it('resourceNames rules limit a caller to the runs named', async () => {
    const [mine, other] = [await runId(), await runId()];
    double.applyRbac([
      {
        kind: 'ClusterRole',
        metadata: { name: 'one-run' },
        rules: [{ apiGroups: ['gitops-scaffolder.io'], resources: ['scaffolds'], verbs: ['get'], resourceNames: [mine] }],
      },
      binding('carol-one-run', 'one-run', { kind: 'User', name: 'carol@example.com' }),
    ]);
    assert.equal((await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${mine}`, headers: as('carol-token') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: `/api/v1/scaffolds/${other}`, headers: as('carol-token') })).statusCode, 403);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: as('carol-token') })).statusCode, 403);
  });

  it('answers 503 (retry later), not 403, when SubjectAccessReview fails', async () => {
    double.injectFailure({ path: /subjectaccessreviews$/, code: 500 });
    const response = await app.inject({ method: 'GET', url: '/api/v1/scaffolds', headers: as('controller-token') });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['retry-after'], '5');
  });

  describe('every route of the table, per shipped role (allow and deny per verb)', () => {
    const callers: [string, Caller, readonly string[]][] = [
      ['gitops-scaffolder-viewer (alice, User binding)', { identity: 'alice@example.com', groups: ['oidc:developers'] }, VIEWER],
      ['gitops-scaffolder-operator (host-cluster-controller, shipped binding)', { identity: CONTROLLER, groups: ['system:serviceaccounts'] }, OPERATOR],
      ['gitops-scaffolder-admin (bob, Group binding)', { identity: 'bob@example.com', groups: ['oidc:platform-admins'] }, ADMIN],
      ['no binding', { identity: 'system:serviceaccount:default:nobody', groups: ['system:serviceaccounts'] }, []],
    ];
    for (const [label, caller, allowed] of callers) {
      it(label, async () => {
        const decisions: string[] = [];
        for (const [route, permission] of Object.entries(ROUTE_PERMISSIONS)) {
          const params = { id: 'run-1', name: 'eu-prod-1' };
          const action = actionOf(permission, { params } as never);
          try {
            await authorizer.authorize(caller, action);
            decisions.push(route);
          } catch (error) {
            assert.ok(error instanceof ForbiddenError, `${route}: ${String(error)}`);
          }
        }
        assert.deepEqual(decisions.sort(), [...allowed].sort());
      });
    }
  });

  it('remembers a decision briefly: repeated polls cost one review', async () => {
    const kubeConfig = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir, { fileName: 'cached' }) });
    const cached = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 60_000 });
    const count = double.requests.length;
    const caller = { identity: CONTROLLER };
    for (let i = 0; i < 5; i++) await cached.authorize(caller, { resource: 'scaffolds', verb: 'get', name: 'run-1' });
    await assert.rejects(cached.authorize({ identity: 'alice@example.com' }, { resource: 'scaffolds', verb: 'create' }), ForbiddenError);
    assert.equal(sarsSince(count).length, 2);
  });

  it('the double answers like the API server: 201 with the RBAC reason, 422 for a spec without attributes or subject', async () => {
    const api = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir, { fileName: 'direct' }) }).makeApiClient(AuthorizationV1Api);
    const review = (spec: V1SubjectAccessReviewSpec) =>
      api.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
    const allowed = await review({ user: CONTROLLER, resourceAttributes: { group: 'gitops-scaffolder.io', resource: 'scaffolds', verb: 'create' } });
    assert.equal(allowed.status?.allowed, true);
    assert.match(allowed.status?.reason ?? '', /ClusterRoleBinding "gitops-scaffolder-host-cluster-controller" of ClusterRole "gitops-scaffolder-operator"/);
    const denied = await review({ user: CONTROLLER, resourceAttributes: { group: 'gitops-scaffolder.io', resource: 'clusters', verb: 'delete' } });
    assert.equal(denied.status?.allowed, false);
    await assert.rejects(review({ user: CONTROLLER }), (error: unknown) => error instanceof ApiException && error.code === 422);
    await assert.rejects(review({ resourceAttributes: { verb: 'get' } }), (error: unknown) => error instanceof ApiException && error.code === 422);
  });

  it('an unreachable API server is UnavailableError', async () => {
    const kubeConfig = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir, { fileName: 'gone' }) });
    kubeConfig.clusters[0] = { ...kubeConfig.clusters[0]!, server: 'http://127.0.0.1:9' };
    const gone = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 0 });
    await assert.rejects(gone.authorize({ identity: CONTROLLER }, { resource: 'scaffolds', verb: 'list' }), UnavailableError);
  });
});
