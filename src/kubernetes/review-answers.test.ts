/**
 * Answers an API server may really give to TokenReview and SubjectAccessReview
 * that a careless client would misread. The shared API double computes its own
 * answers (it checks audiences and never sets `denied` with `allowed`), so a
 * client-side check could be deleted without any test noticing. Here a
 * loopback server answers each review exactly as the test says, and the real
 * client library carries it to the authenticator and authorizer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { AuthenticationError, ForbiddenError } from '../errors.js';
import { SubjectAccessReviewAuthorizer } from './subject-access-review-authorizer.js';
import { TokenReviewAuthenticator } from './token-review-authenticator.js';

const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

describe('review answers taken at their word', () => {
  let server: Server;
  let kubeConfig: KubeConfig;
  /** The `status` the server puts in its next answer to each review kind. */
  const answers = new Map<string, unknown>();
  const seen: { path: string; spec: unknown }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; kind: string; spec: unknown };
        const path = req.url ?? '';
        seen.push({ path, spec: body.spec });
        if (req.method !== 'POST' || !answers.has(path)) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404 }));
          return;
        }
        // The API server echoes the review with its status, 201 Created.
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...body, metadata: { creationTimestamp: null }, status: answers.get(path) }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      // Plain http on loopback: client-node allows it only with skipTLSVerify (there is no TLS to verify).
      clusters: [{ name: 'host', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'service', token: 'service-account-token' }],
      contexts: [{ name: 'host', cluster: 'host', user: 'service' }],
      currentContext: 'host',
    });
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a SubjectAccessReview that says allowed and denied at once is a denial (an explicit deny wins)', async () => {
    const authorizer = new SubjectAccessReviewAuthorizer({ kubeConfig, cacheTtlMs: 0 });
    answers.set(ACCESS_REVIEWS, { allowed: true, denied: true, reason: 'denied by a webhook authorizer' });
    await assert.rejects(authorizer.authorize({ identity: 'alice@example.com' }, { resource: 'scaffolds', verb: 'create' }), ForbiddenError);
    // The same caller and action are allowed when the answer only allows: the refusal above came from `denied`.
    answers.set(ACCESS_REVIEWS, { allowed: true });
    await authorizer.authorize({ identity: 'alice@example.com' }, { resource: 'scaffolds', verb: 'create' });
  });

  it('a TokenReview authenticated for another audience is refused: the client checks status.audiences itself', async () => {
    const authenticator = new TokenReviewAuthenticator({ kubeConfig, audiences: ['gitops-scaffolder'], cacheTtlMs: 0 });
    // An audience-unaware authenticator behind the API server says yes and names the audience it checked.
    answers.set(TOKEN_REVIEWS, {
      authenticated: true,
      user: { username: 'system:serviceaccount:core:controller' },
      audiences: ['https://kubernetes.default.svc'],
    });
    await assert.rejects(
      authenticator.authenticate('a-token-for-the-api-server'),
      (error: unknown) => error instanceof AuthenticationError && /not valid for this service/.test(error.message),
    );
    answers.set(TOKEN_REVIEWS, { authenticated: true, user: { username: 'system:serviceaccount:core:controller' } });
    await assert.rejects(authenticator.authenticate('a-token-with-no-audience-said'), AuthenticationError, 'no audiences in the answer is not our audience');
    // It asked for its audience, and accepts the answer that names it.
    assert.deepEqual((seen.at(-1)?.spec as { audiences?: string[] }).audiences, ['gitops-scaffolder']);
    answers.set(TOKEN_REVIEWS, { authenticated: true, user: { username: 'system:serviceaccount:core:controller' }, audiences: ['gitops-scaffolder'] });
    assert.equal((await authenticator.authenticate('a-token-for-us')).identity, 'system:serviceaccount:core:controller');
  });
});
