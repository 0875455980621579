import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError, type FieldIssue } from '../errors.js';
import { DEFAULT_RUNNER_IMAGE, DEFAULT_RUNNER_SERVICE_ACCOUNT, loadServiceConfig, type ServiceConfig } from './service-config.js';

const TOKEN = 'static-token-0123456789';
const OTHER_TOKEN = 'static-token-abcdefghij';
const SA = 'system:serviceaccount:kubeopera-core:host-cluster-controller';
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Loads with a minimal valid embedded-mode environment plus `env`. */
function load(env: Record<string, string | undefined>, cwd = '/srv/app'): ServiceConfig {
  return loadServiceConfig({ API_TOKENS: TOKEN, ...env }, cwd);
}

/** The issues of a configuration that must be refused. */
function issuesOf(env: Record<string, string | undefined>, cwd = '/srv/app'): FieldIssue[] {
  try {
    loadServiceConfig(env, cwd);
  } catch (error) {
    assert.ok(error instanceof ValidationError, `a ValidationError, got ${String(error)}`);
    return [...error.issues];
  }
  assert.fail('the configuration was accepted');
}

/** Asserts that setting `variable` to `value` (on a valid base) is refused with an issue naming it, matching `message`. */
function refuses(variable: string, value: string, message: RegExp, base: Record<string, string> = { API_TOKENS: TOKEN }): FieldIssue {
  const issues = issuesOf({ ...base, [variable]: value });
  const issue = issues.find((i) => i.field === variable);
  assert.ok(issue, `${variable}=${JSON.stringify(value)}: an issue for ${variable}, got ${JSON.stringify(issues)}`);
  assert.match(issue.message, message);
  assert.ok(issue.message.length > 0);
  return issue;
}

describe('loadServiceConfig', () => {
  describe('defaults', () => {
    it('gives every documented default outside a cluster', () => {
      const config = load({});
      assert.equal(config.databaseUrl, undefined, 'unset: embedded PGlite');
      assert.equal(config.defaultGitopsRepoUrl, undefined, 'unset: the embedded default repository');
      assert.deepEqual(config, {
        port: 8080,
        host: '0.0.0.0',
        apiTokens: [TOKEN],
        dataDir: '/srv/app/.gitops-scaffolder',
        executor: 'local',
        jobNamespace: 'kubeopera-provisioning',
        runnerImage: `ghcr.io/kubeopera/scaffold-runner:${VERSION}`,
        runnerServiceAccount: 'scaffold-runner',
        runnerTmpSizeLimit: '2Gi',
        runnerScratchSizeLimit: '256Mi',
        runnerMemoryLimit: '1Gi',
        runnerImagePullSecrets: [],
        allowedRepositoryUrls: [],
        referenceEnvironment: 'development',
        authMode: 'static',
        tokenReviewAudiences: [],
        allowedServiceAccounts: [],
        metricsPublic: false,
        logLevel: 'info',
        bodyLimitBytes: 65536,
        requestTimeoutMs: 30000,
      } satisfies ServiceConfig);
    });

    it('defaults to the runner image of this release, not the service image', () => {
      assert.equal(DEFAULT_RUNNER_IMAGE, `ghcr.io/kubeopera/scaffold-runner:${VERSION}`);
      assert.doesNotMatch(DEFAULT_RUNNER_IMAGE, /gitops-scaffolder/);
      assert.equal(DEFAULT_RUNNER_SERVICE_ACCOUNT, 'scaffold-runner');
    });

    it('treats blank values as unset', () => {
      const config = load({
        PORT: '',
        HOST: '  ',
        DATABASE_URL: '',
        DATA_DIR: '',
        EXECUTOR: '',
        JOB_NAMESPACE: ' ',
        SCAFFOLD_RUNNER_IMAGE: '',
        SCAFFOLD_RUNNER_SERVICE_ACCOUNT: '',
        SCAFFOLD_RUNNER_TMP_SIZE_LIMIT: '',
        DEFAULT_GITOPS_REPO_URL: '',
        REFERENCE_ENVIRONMENT: '',
        AUTH_MODE: '',
        TOKEN_REVIEW_AUDIENCES: '',
        ALLOWED_SERVICE_ACCOUNTS: '',
        METRICS_PUBLIC: '',
        LOG_LEVEL: '',
        BODY_LIMIT_BYTES: '',
        REQUEST_TIMEOUT_MS: '',
        KUBERNETES_SERVICE_HOST: '',
      });
      assert.deepEqual(config, load({}));
    });

    it('reads every variable when set', () => {
      const config = loadServiceConfig(
        {
          PORT: '0',
          HOST: '127.0.0.1',
          API_TOKENS: ` ${TOKEN} , ${OTHER_TOKEN},`,
          DATABASE_URL: 'postgresql://scaffolder:pw@db.example:5432/scaffolder?sslmode=require',
          DATA_DIR: 'state',
          EXECUTOR: 'kubernetes',
          JOB_NAMESPACE: 'provisioning',
          SCAFFOLD_RUNNER_IMAGE: 'registry.example.net:5000/platform/scaffold-runner:1.2.3',
          SCAFFOLD_RUNNER_SERVICE_ACCOUNT: 'runner.v2',
          SCAFFOLD_RUNNER_TMP_SIZE_LIMIT: '512Mi',
          SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT: '1Gi',
          SCAFFOLD_RUNNER_MEMORY_LIMIT: '2Gi',
          SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS: ' registry-creds, mirror.pull ,',
          DEFAULT_GITOPS_REPO_URL: 'https://git.example.net/platform/gitops.git',
          ALLOWED_REPOSITORY_URLS: 'https://git.example.net/platform/, file:///srv/git/mirror.git',
          REFERENCE_ENVIRONMENT: 'staging',
          AUTH_MODE: 'static',
          TOKEN_REVIEW_AUDIENCES: 'gitops-scaffolder, https://kubernetes.default.svc',
          ALLOWED_SERVICE_ACCOUNTS: `${SA},system:serviceaccount:kubeopera-ops:*`,
          METRICS_PUBLIC: 'TRUE',
          LOG_LEVEL: 'Debug',
          BODY_LIMIT_BYTES: '1048576',
          REQUEST_TIMEOUT_MS: '5000',
        },
        '/srv/app',
      );
      assert.deepEqual(config, {
        port: 0,
        host: '127.0.0.1',
        apiTokens: [TOKEN, OTHER_TOKEN],
        databaseUrl: 'postgresql://scaffolder:pw@db.example:5432/scaffolder?sslmode=require',
        dataDir: '/srv/app/state',
        executor: 'kubernetes',
        jobNamespace: 'provisioning',
        runnerImage: 'registry.example.net:5000/platform/scaffold-runner:1.2.3',
        runnerServiceAccount: 'runner.v2',
        runnerTmpSizeLimit: '512Mi',
        runnerScratchSizeLimit: '1Gi',
        runnerMemoryLimit: '2Gi',
        runnerImagePullSecrets: ['registry-creds', 'mirror.pull'],
        defaultGitopsRepoUrl: 'https://git.example.net/platform/gitops.git',
        allowedRepositoryUrls: ['https://git.example.net/platform/', 'file:///srv/git/mirror.git'],
        referenceEnvironment: 'staging',
        authMode: 'static',
        tokenReviewAudiences: ['gitops-scaffolder', 'https://kubernetes.default.svc'],
        allowedServiceAccounts: [SA, 'system:serviceaccount:kubeopera-ops:*'],
        metricsPublic: true,
        logLevel: 'debug',
        bodyLimitBytes: 1048576,
        requestTimeoutMs: 5000,
      } satisfies ServiceConfig);
    });

    it('keeps an absolute DATA_DIR and resolves a relative one against cwd', () => {
      assert.equal(load({ DATA_DIR: '/var/lib/scaffolder' }).dataDir, '/var/lib/scaffolder');
      assert.equal(load({ DATA_DIR: '../data' }, '/srv/app').dataDir, '/srv/data');
      assert.equal(load({}, '/home/dev').dataDir, '/home/dev/.gitops-scaffolder');
    });

    it('accepts image references by tag, by digest, and with a registry port', () => {
      for (const image of [
        'scaffold-runner',
        'ghcr.io/kubeopera/scaffold-runner:0.1.0',
        `ghcr.io/kubeopera/scaffold-runner@sha256:${'a'.repeat(64)}`,
        'localhost:5000/runner:dev-1',
      ]) {
        assert.equal(load({ SCAFFOLD_RUNNER_IMAGE: image }).runnerImage, image);
      }
    });

    it('reads METRICS_PUBLIC as true/1/yes or false/0/no, in any case', () => {
      for (const value of ['true', '1', 'yes', 'YES', ' True ']) assert.equal(load({ METRICS_PUBLIC: value }).metricsPublic, true, value);
      for (const value of ['false', '0', 'no', 'No']) assert.equal(load({ METRICS_PUBLIC: value }).metricsPublic, false, value);
    });
  });

  describe('EXECUTOR and AUTH_MODE defaults follow KUBERNETES_SERVICE_HOST', () => {
    it('outside a cluster: local runs, static tokens', () => {
      const config = load({});
      assert.equal(config.executor, 'local');
      assert.equal(config.authMode, 'static');
    });

    it('in a cluster: Kubernetes Jobs, TokenReview (which then needs an allow-list)', () => {
      const config = loadServiceConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1', ALLOWED_SERVICE_ACCOUNTS: SA }, '/');
      assert.equal(config.executor, 'kubernetes');
      assert.equal(config.authMode, 'tokenreview');
      assert.deepEqual(config.apiTokens, []);
    });

    it('an explicit EXECUTOR or AUTH_MODE wins over the default', () => {
      const inCluster = loadServiceConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1', EXECUTOR: 'local', AUTH_MODE: 'static', API_TOKENS: TOKEN }, '/');
      assert.equal(inCluster.executor, 'local');
      assert.equal(inCluster.authMode, 'static');
      const outside = loadServiceConfig({ EXECUTOR: 'kubernetes', AUTH_MODE: 'tokenreview', ALLOWED_SERVICE_ACCOUNTS: SA }, '/');
      assert.equal(outside.executor, 'kubernetes');
      assert.equal(outside.authMode, 'tokenreview');
    });
  });

  describe('cross-variable rules', () => {
    it('AUTH_MODE static in a cluster requires API_TOKENS; outside one, none means "generate one" (embedded mode)', () => {
      assert.deepEqual(issuesOf({ AUTH_MODE: 'static', KUBERNETES_SERVICE_HOST: '10.96.0.1' }), [
        { field: 'API_TOKENS', message: 'must list at least one token when AUTH_MODE is static in a cluster' },
      ]);
      for (const env of [{}, { AUTH_MODE: 'static' }, { API_TOKENS: ' , ' }]) {
        const config = loadServiceConfig(env, '/');
        assert.equal(config.authMode, 'static', JSON.stringify(env));
        assert.deepEqual(config.apiTokens, [], JSON.stringify(env));
      }
    });

    it('AUTH_MODE tokenreview needs neither API_TOKENS nor ALLOWED_SERVICE_ACCOUNTS (RBAC decides)', () => {
      assert.deepEqual(loadServiceConfig({ AUTH_MODE: 'tokenreview' }, '/').allowedServiceAccounts, []);
      assert.equal(loadServiceConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, '/').authMode, 'tokenreview');
      assert.equal(loadServiceConfig({ AUTH_MODE: 'tokenreview', ALLOWED_SERVICE_ACCOUNTS: SA }, '/').authMode, 'tokenreview');
    });
  });

  describe('validation: each bad variable is named with a clear rule', () => {
    it('PORT: a whole number from 0 to 65535', () => {
      refuses('PORT', 'http', /^must be a whole number$/);
      refuses('PORT', '80.5', /^must be a whole number$/);
      refuses('PORT', '-1', /^must be at least 0$/);
      refuses('PORT', '65536', /^must be at most 65535$/);
      assert.equal(load({ PORT: '65535' }).port, 65535);
      assert.equal(load({ PORT: ' 9090 ' }).port, 9090);
    });

    it('BODY_LIMIT_BYTES: from 1024 to 10 MiB', () => {
      refuses('BODY_LIMIT_BYTES', '1023', /^must be at least 1024$/);
      refuses('BODY_LIMIT_BYTES', String(10 * 1024 * 1024 + 1), /^must be at most 10485760$/);
      refuses('BODY_LIMIT_BYTES', '64k', /^must be a whole number$/);
      refuses('BODY_LIMIT_BYTES', '2048.5', /^must be a whole number$/);
      assert.equal(load({ BODY_LIMIT_BYTES: '1024' }).bodyLimitBytes, 1024);
      assert.equal(load({ BODY_LIMIT_BYTES: String(10 * 1024 * 1024) }).bodyLimitBytes, 10 * 1024 * 1024);
    });

    it('SCAFFOLD_RUNNER_TMP_SIZE_LIMIT, SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT and SCAFFOLD_RUNNER_MEMORY_LIMIT: a whole size above zero, in Kubernetes units', () => {
      for (const [name, field] of [
        ['SCAFFOLD_RUNNER_TMP_SIZE_LIMIT', 'runnerTmpSizeLimit'],
        ['SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT', 'runnerScratchSizeLimit'],
        ['SCAFFOLD_RUNNER_MEMORY_LIMIT', 'runnerMemoryLimit'],
      ] as const) {
        // A memory limit that leaves a 1Gi scratch its room, so only the size's own form is judged.
        const base = { API_TOKENS: TOKEN, SCAFFOLD_RUNNER_MEMORY_LIMIT: '100Gi' };
        for (const bad of ['0', '2GB', '1.5Gi', '-1Gi', '2 Gi', '1e9']) refuses(name, bad, /^must be a size such as 512Mi, 2Gi or 1G$/, base);
        for (const good of ['1Gi', '10G', '2147483648', '50Gi']) assert.equal(load({ ...base, [name]: good })[field], good);
      }
    });

    it("SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT: must leave the runner process 512Mi of the memory limit, which the volume's files count against", () => {
      // The defaults fit: 256Mi of scratch in 1Gi.
      assert.equal(load({}).runnerScratchSizeLimit, '256Mi');
      // Exactly the room left fits; a byte more, in any unit, does not.
      assert.equal(load({ SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT: '512Mi' }).runnerScratchSizeLimit, '512Mi');
      assert.equal(load({ SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT: String(512 * 2 ** 20) }).runnerScratchSizeLimit, String(512 * 2 ** 20));
      for (const over of ['513Mi', String(512 * 2 ** 20 + 1), '1G', '1Gi']) {
        const issue = refuses('SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT', over, /OOM-killed instead of evicted/);
        assert.match(issue.message, new RegExp(`^${over} must leave the runner process 512Mi of its memory limit \\(SCAFFOLD_RUNNER_MEMORY_LIMIT 1Gi\\)`));
      }
      // Raising the memory limit makes room; a decimal limit is read in decimal units (1G is 74Mi short of 1Gi).
      assert.equal(load({ SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT: '1Gi', SCAFFOLD_RUNNER_MEMORY_LIMIT: '1536Mi' }).runnerMemoryLimit, '1536Mi');
      assert.equal(load({ SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT: '440Mi', SCAFFOLD_RUNNER_MEMORY_LIMIT: '1G' }).runnerScratchSizeLimit, '440Mi');
      refuses('SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT', '450Mi', /\(SCAFFOLD_RUNNER_MEMORY_LIMIT 1G\)/, { API_TOKENS: TOKEN, SCAFFOLD_RUNNER_MEMORY_LIMIT: '1G' });
    });

    it('REQUEST_TIMEOUT_MS: from 1 s to 10 minutes, never off', () => {
      refuses('REQUEST_TIMEOUT_MS', '0', /^must be at least 1000$/);
      refuses('REQUEST_TIMEOUT_MS', '600001', /^must be at most 600000$/);
      refuses('REQUEST_TIMEOUT_MS', '30s', /^must be a whole number$/);
      assert.equal(load({ REQUEST_TIMEOUT_MS: '1000' }).requestTimeoutMs, 1000);
      assert.equal(load({ REQUEST_TIMEOUT_MS: '600000' }).requestTimeoutMs, 600_000);
    });

    it('API_TOKENS: each at least 16 characters, without whitespace, none twice', () => {
      refuses('API_TOKENS', 'short', /^token #1 is shorter than 16 characters$/);
      refuses('API_TOKENS', `${TOKEN},short`, /^token #2 is shorter than 16 characters$/);
      refuses('API_TOKENS', 'has a space in it, really', /^token #1 contains whitespace$/);
      refuses('API_TOKENS', `${TOKEN},${TOKEN}`, /^the same token is listed twice$/);
    });

    it('DATABASE_URL: a postgres:// or postgresql:// URL', () => {
      refuses('DATABASE_URL', 'mysql://db.example/scaffolder', /^must be a postgres:\/\/ or postgresql:\/\/ URL$/);
      refuses('DATABASE_URL', 'db.example:5432', /postgres/);
      assert.equal(load({ DATABASE_URL: 'postgres://localhost/db' }).databaseUrl, 'postgres://localhost/db');
    });

    it('EXECUTOR: local or kubernetes', () => {
      refuses('EXECUTOR', 'docker', /^must be local or kubernetes$/);
      refuses('EXECUTOR', 'Kubernetes', /^must be local or kubernetes$/);
    });

    it('JOB_NAMESPACE and REFERENCE_ENVIRONMENT: DNS-1123 labels', () => {
      for (const variable of ['JOB_NAMESPACE', 'REFERENCE_ENVIRONMENT']) {
        refuses(variable, 'Provisioning', /DNS-1123 label/);
        refuses(variable, 'a/b', /DNS-1123 label/);
        refuses(variable, 'x'.repeat(64), /at most 63 characters/);
      }
    });

    it('SCAFFOLD_RUNNER_IMAGE: a container image reference', () => {
      for (const image of ['Ghcr.io/Runner:1', 'runner:1 --privileged', 'runner@sha256:abc', 'runner:', '-runner']) {
        refuses('SCAFFOLD_RUNNER_IMAGE', image, /^must be a container image reference/);
      }
    });

    it('SCAFFOLD_RUNNER_SERVICE_ACCOUNT: a ServiceAccount name (DNS-1123 subdomain)', () => {
      for (const name of ['Scaffold-Runner', 'runner_sa', '-runner', 'system:serviceaccount:ns:runner', 'a..b']) {
        refuses('SCAFFOLD_RUNNER_SERVICE_ACCOUNT', name, /^must be a ServiceAccount name/);
      }
      refuses('SCAFFOLD_RUNNER_SERVICE_ACCOUNT', 'a'.repeat(254), /^must be at most 253 characters$/);
      assert.equal(load({ SCAFFOLD_RUNNER_SERVICE_ACCOUNT: 'runner' }).runnerServiceAccount, 'runner');
    });

    it('SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS: comma-separated Secret names (DNS-1123 subdomains)', () => {
      for (const list of ['Registry', 'ok,pull_secret', 'a..b', 'regcred --all']) {
        refuses('SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS', list, /^each entry must be a Secret name/);
      }
      refuses('SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS', 'a'.repeat(254), /^each entry must be at most 253 characters$/);
      assert.deepEqual(load({ SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS: 'regcred' }).runnerImagePullSecrets, ['regcred']);
    });

    it("DEFAULT_GITOPS_REPO_URL: the same rules as a request's repository.url", () => {
      refuses('DEFAULT_GITOPS_REPO_URL', 'git@git.example.net:platform/gitops.git', /scp-style/);
      refuses('DEFAULT_GITOPS_REPO_URL', 'ext::sh%20-c%20id', /remote helper/);
      refuses('DEFAULT_GITOPS_REPO_URL', 'http://git.example.net/platform/gitops.git', /only accepted to a loopback host/);
      refuses('DEFAULT_GITOPS_REPO_URL', 'ftp://git.example.net/gitops.git', /unsupported scheme; use https:\/\/, ssh:\/\/ or file:\/\/\//);
      refuses('ALLOWED_REPOSITORY_URLS', 'https://git.example.net/ok.git,http://localhost\\@169.254.169.254/x', /backslash/);
      refuses('DEFAULT_GITOPS_REPO_URL', 'https://git.example.net/', /repository path/);
      refuses('DEFAULT_GITOPS_REPO_URL', 'https://git.example.net/gitops.git?ref=main', /query or fragment/);
      refuses('DEFAULT_GITOPS_REPO_URL', 'https://user:pw@git.example.net/gitops.git', /must not embed credentials/);
      for (const url of [
        'https://git.example.net/platform/gitops.git',
        'ssh://git@git.example.net/platform/gitops.git',
        'file:///srv/git/gitops.git',
        'http://127.0.0.1:9418/gitops.git',
      ]) {
        assert.equal(load({ DEFAULT_GITOPS_REPO_URL: url }).defaultGitopsRepoUrl, url);
      }
    });

    it('AUTH_MODE: static or tokenreview', () => {
      refuses('AUTH_MODE', 'oidc', /^must be static or tokenreview$/);
    });

    it('TOKEN_REVIEW_AUDIENCES: comma-separated, no whitespace inside an audience', () => {
      refuses('TOKEN_REVIEW_AUDIENCES', 'gitops scaffolder', /^must not contain whitespace$/);
      assert.deepEqual(load({ TOKEN_REVIEW_AUDIENCES: 'a,,b,' }).tokenReviewAudiences, ['a', 'b']);
    });

    it('ALLOWED_SERVICE_ACCOUNTS: system:serviceaccount:NAMESPACE:NAME or NAMESPACE:*', () => {
      for (const entry of [
        'host-cluster-controller',
        'system:serviceaccount:kubeopera-core',
        'system:serviceaccount:Core:controller',
        'system:serviceaccount:core:Controller',
        'system:serviceaccount:*:*',
        `system:serviceaccount:${'n'.repeat(64)}:x`,
      ]) {
        refuses('ALLOWED_SERVICE_ACCOUNTS', entry, /^each entry must be system:serviceaccount:NAMESPACE:NAME/);
      }
      refuses('ALLOWED_SERVICE_ACCOUNTS', `${SA},system:user:alice`, /^each entry must be/);
    });

    it('METRICS_PUBLIC: a boolean', () => {
      refuses('METRICS_PUBLIC', 'maybe', /^must be true or false$/);
    });

    it("LOG_LEVEL: one of pino's levels", () => {
      refuses('LOG_LEVEL', 'verbose', /^must be one of fatal, error, warn, info, debug, trace, silent$/);
      for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        assert.equal(load({ LOG_LEVEL: level.toUpperCase() }).logLevel, level);
    });

    it('reports every bad variable at once, one issue each, in a message that names them', () => {
      let thrown: unknown;
      try {
        loadServiceConfig({ API_TOKENS: TOKEN, PORT: 'x', EXECUTOR: 'docker', LOG_LEVEL: 'loud', BODY_LIMIT_BYTES: '1' }, '/');
      } catch (error) {
        thrown = error;
      }
      assert.ok(thrown instanceof ValidationError);
      assert.deepEqual(thrown.issues.map((i) => i.field).sort(), ['BODY_LIMIT_BYTES', 'EXECUTOR', 'LOG_LEVEL', 'PORT']);
      for (const variable of ['PORT', 'EXECUTOR', 'LOG_LEVEL', 'BODY_LIMIT_BYTES']) assert.match(thrown.message, new RegExp(`${variable}: must`));
    });
  });

  describe('secrets never appear in an error', () => {
    const leaks = (env: Record<string, string>, secrets: readonly string[]): void => {
      let thrown: unknown;
      try {
        loadServiceConfig(env, '/');
      } catch (error) {
        thrown = error;
      }
      assert.ok(thrown instanceof ValidationError, 'refused');
      const text = `${thrown.message}\n${JSON.stringify(thrown.issues)}\n${String(thrown.stack)}`;
      for (const secret of secrets) assert.ok(!text.includes(secret), `the error must not contain ${secret}`);
    };

    it('API_TOKENS: a short, a whitespace-bearing and a repeated token are referred to by position', () => {
      leaks({ API_TOKENS: 'tooshort-secret' }, ['tooshort-secret']);
      leaks({ API_TOKENS: `${TOKEN},s3cr3t with space inside` }, [TOKEN, 's3cr3t', 'with space']);
      leaks({ API_TOKENS: `${OTHER_TOKEN},${OTHER_TOKEN}` }, [OTHER_TOKEN]);
      // A valid token next to another bad variable is not echoed either.
      leaks({ API_TOKENS: TOKEN, PORT: 'bad' }, [TOKEN]);
    });

    it('DATABASE_URL and DEFAULT_GITOPS_REPO_URL: the password in a refused URL', () => {
      leaks({ API_TOKENS: TOKEN, DATABASE_URL: 'mysql://scaffolder:db-hunter2@db.example/scaffolder' }, ['db-hunter2', 'scaffolder@']);
      leaks({ API_TOKENS: TOKEN, DEFAULT_GITOPS_REPO_URL: 'https://bot:glpat-repo-secret@git.example.net/gitops.git' }, ['glpat-repo-secret']);
      leaks({ API_TOKENS: TOKEN, DEFAULT_GITOPS_REPO_URL: 'https://git.example.net/gitops.git?private_token=glpat-query-secret' }, ['glpat-query-secret']);
    });

    it('no rejected value is quoted back, whatever the variable', () => {
      const marker = 'zz-value-marker-zz';
      for (const variable of [
        'PORT',
        'EXECUTOR',
        'JOB_NAMESPACE',
        'SCAFFOLD_RUNNER_IMAGE',
        'SCAFFOLD_RUNNER_SERVICE_ACCOUNT',
        'SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS',
        'REFERENCE_ENVIRONMENT',
        'AUTH_MODE',
        'ALLOWED_SERVICE_ACCOUNTS',
        'METRICS_PUBLIC',
        'LOG_LEVEL',
        'BODY_LIMIT_BYTES',
      ]) {
        leaks({ API_TOKENS: TOKEN, [variable]: `${marker} ${marker.toUpperCase()}` }, [marker, marker.toUpperCase()]);
      }
      leaks({ API_TOKENS: TOKEN, TOKEN_REVIEW_AUDIENCES: `${marker} x` }, [marker]);
    });
  });
});
