/**
 * The dashboard's start form, its view logic: delivery (push or pull
 * requests) and the secrets, among them a GitHub App, as the request body the
 * service gets. Every body is checked with the service's own request schema,
 * so what the form sends is what the API accepts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { scaffoldRequestSchema, retryRequestSchema } from '../../src/http/wire-schemas.js';
import { deliveryIssues, deliveryRequest, EMPTY_DELIVERY, usesGithubApp, type DeliveryValues } from '../../ui/src/delivery-values.js';
import { clearedSecrets, EMPTY_SECRETS, SECRET_FIELDS, secretIssues, secretsRequest, type SecretValues } from '../../ui/src/secret-values.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';

const TEST_CERTIFICATE = createTestCertificate();
const CERTIFICATE = TEST_CERTIFICATE.certificatePem;
// Any PEM private key stands for the App's: the browser only checks its shape.
const APP_KEY = TEST_CERTIFICATE.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const GITHUB_PRS: DeliveryValues = { mode: 'pull_request', forge: 'github', autoMerge: true, apiUrl: '' };
const cluster = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const withApp = (values: Partial<SecretValues> = {}): SecretValues => ({
  ...EMPTY_SECRETS,
  certificate: CERTIFICATE,
  appId: ' 123456 ',
  installationId: '7890123',
  appPrivateKey: `\n${APP_KEY}\n`,
  ...values,
});

/** The body the form sends to start a run, as the dry-run page builds it. */
const startBody = (secrets: SecretValues, delivery: DeliveryValues) => ({
  cluster,
  ...secretsRequest(secrets, usesGithubApp(delivery)),
  ...deliveryRequest(delivery),
});

describe('the start form: delivery and a GitHub App', () => {
  it('sends the GitHub App as repository.credentials.github_app with pull requests on GitHub, and the service accepts it', () => {
    const body = startBody(withApp(), GITHUB_PRS);
    assert.deepEqual(body.delivery, { mode: 'pull_request', auto_merge: true, forge: 'github' });
    assert.deepEqual(body.repository, { credentials: { github_app: { app_id: '123456', installation_id: '7890123', private_key: APP_KEY.trim() + '\n' } } });
    assert.deepEqual(secretIssues(withApp(), true), new Map());
    const parsed = scaffoldRequestSchema.safeParse(body);
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
    // Beside a token, both go.
    const both = startBody(withApp({ token: 'ghp_example', username: 'bot' }), GITHUB_PRS);
    assert.deepEqual(Object.keys(both.repository?.credentials ?? {}).sort(), ['github_app', 'token', 'username']);
    assert.ok(scaffoldRequestSchema.safeParse(both).success);
    // A retry of such a run sends it again.
    assert.ok(retryRequestSchema.safeParse(secretsRequest(withApp(), true)).success);
  });

  it('sends no GitHub App (and no delivery) when the run is pushed or its forge is not GitHub, so the service never refuses the form for it', () => {
    for (const delivery of [EMPTY_DELIVERY, { ...GITHUB_PRS, forge: 'gitlab' } as const, { ...GITHUB_PRS, mode: 'push' } as const]) {
      assert.equal(usesGithubApp(delivery), false);
      const body = startBody(withApp(), delivery);
      assert.equal(body.repository, undefined, JSON.stringify(delivery));
      assert.ok(scaffoldRequestSchema.safeParse(body).success, JSON.stringify(delivery));
      assert.deepEqual(secretIssues(withApp({ appId: 'not-a-number' }), usesGithubApp(delivery)), new Map(), 'hidden fields raise no issue');
    }
    assert.equal(startBody(withApp(), EMPTY_DELIVERY).delivery, undefined, 'push is the default: nothing sent');
  });

  it('asks for all three App fields once one is given, each in its own shape, before the service is asked', () => {
    const issues = secretIssues(withApp({ appId: 'my-app', installationId: '', appPrivateKey: 'ghp_not_a_key' }), true);
    assert.deepEqual([...issues.keys()].sort(), ['github-app-id', 'github-app-installation-id', 'github-app-private-key']);
    assert.deepEqual([...secretIssues(withApp({ appPrivateKey: '' }), true).keys()], ['github-app-private-key']);
    // The service's field errors land on the fields too.
    for (const field of [
      'repository.credentials.github_app.app_id',
      'repository.credentials.github_app.installation_id',
      'repository.credentials.github_app.private_key',
    ]) {
      assert.ok(
        SECRET_FIELDS.some((f) => f.api.includes(field)),
        field,
      );
    }
  });

  it('needs a forge for pull requests and takes an optional API URL', () => {
    assert.deepEqual([...deliveryIssues({ ...GITHUB_PRS, forge: '' }).keys()], ['delivery-forge']);
    assert.deepEqual([...deliveryIssues({ ...GITHUB_PRS, apiUrl: 'ghe.example.com' }).keys()], ['delivery-api-url']);
    assert.deepEqual(deliveryIssues({ ...EMPTY_DELIVERY, forge: '' }), new Map());
    const body = startBody(
      { ...EMPTY_SECRETS, certificate: CERTIFICATE, token: 'glpat-example' },
      { mode: 'pull_request', forge: 'gitlab', autoMerge: false, apiUrl: ' https://gitlab.example.net/api/v4 ' },
    );
    assert.deepEqual(body.delivery, { mode: 'pull_request', auto_merge: false, forge: 'gitlab', api_url: 'https://gitlab.example.net/api/v4' });
    assert.ok(scaffoldRequestSchema.safeParse(body).success);
  });

  it('drops every secret from the form once the run was accepted, keeping only how the certificate is given', () => {
    const filled = withApp({ mode: 'kubeconfig-inline', kubeconfig: 'apiVersion: v1', token: 'ghp_example', username: 'bot', registryAuth: '{"auths":{}}' });
    const cleared = clearedSecrets(filled);
    assert.equal(cleared.mode, 'kubeconfig-inline');
    for (const [key, value] of Object.entries(cleared)) if (key !== 'mode') assert.equal(value, EMPTY_SECRETS[key as keyof SecretValues], key);
    assert.deepEqual(secretsRequest(cleared, true), { kubeconfig: { inline: '' } });
  });

  it('keeps no secret in browser storage: only the API token is, in sessionStorage', async () => {
    const dir = new URL('../../ui/src/', import.meta.url);
    for (const name of await readdir(dir)) {
      const code = (await readFile(new URL(name, dir), 'utf8')).split('\n').filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
      const uses = code.filter((line) => /\b(localStorage|sessionStorage|indexedDB)\b|document\.cookie/.test(line));
      if (name === 'api.ts') for (const use of uses) assert.match(use, /sessionStorage\.(getItem|setItem|removeItem)\(TOKEN_KEY[,)]/, use);
      else assert.deepEqual(uses, [], name);
    }
  });
});
