/**
 * Delivery through pull/merge requests, end to end: the real run (`runScaffold`
 * with native git) against a real git daemon on loopback whose `main` is
 * protected by a pre-receive hook, and the forge double in front of the same
 * bare repository, driven through the real clients (Octokit with its
 * throttling and retry plugins, gitbeaker, Gitea's REST API over fetch).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createForgeClient } from '../../src/delivery/create-delivery.js';
import type { ForgeName } from '../../src/delivery/forge-client.js';
import { PullRequestDelivery } from '../../src/delivery/pull-request-delivery.js';
import { ForbiddenError, ConflictError } from '../../src/errors.js';
import { CliGitRemote } from '../../src/git/cli-git-remote.js';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import type { ClusterSpec } from '../../src/model/cluster-spec.js';
import { packageVersion, platformDir } from '../../src/package-paths.js';
import { runScaffold, StepError, type ScaffoldRunDeps } from '../../src/runner/run-scaffold.js';
import { createTestCertificate, type TestCertificate } from '../../src/sealing/test-certificate.js';
import { type ForgeDouble, startForgeDouble } from '../support/forge-double.js';
import { type GitDaemon, type GitHttpServer, startGitDaemon, startGitHttpServer } from '../support/git-server.js';
import { git } from '../support/git.js';
import { protectMain } from '../support/protected-branch.js';
import { type CapturingLogger, capturingLogger, commitsOf, describeOutcome, eventually, runRunner, sealedSecretsIn, treeAt } from '../support/runner.js';

const CLUSTER: ClusterSpec = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
const OWNER = 'acme';
const TOKEN = 'forge-token-0123456789';

let scratch: string;
let served: string;
let seedRepo: string;
let daemon: GitDaemon;
/** The same repositories over smart HTTP, for the runner CLI: its token needs an http(s) remote. */
let http: GitHttpServer;
let certificate: TestCertificate;
let repoCount = 0;
const doubles: ForgeDouble[] = [];

interface Remote {
  readonly name: string;
  readonly dir: string;
  readonly url: string;
  readonly seedSha: string;
}

/** A copy of the seeded platform at `acme/<name>.git`, its main protected. */
async function newRemote(): Promise<Remote> {
  const name = `platform-${++repoCount}`;
  const dir = join(served, OWNER, `${name}.git`);
  await git(scratch, 'clone', '--quiet', '--bare', seedRepo, dir);
  for (const [key, value] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
  ] as const)
    await git(dir, 'config', key, value);
  await protectMain(dir);
  return { name, dir, url: daemon.url(`${OWNER}/${name}.git`), seedSha: await git(dir, 'rev-parse', 'main') };
}

async function forgeFor(forge: ForgeName, remote: Remote, checksPass = true): Promise<ForgeDouble> {
  const double = await startForgeDouble({ forge, repoDir: remote.dir, owner: OWNER, repo: remote.name, token: TOKEN, checksPass });
  doubles.push(double);
  return double;
}

function deliveryFor(forge: ForgeName, double: ForgeDouble, remote: Remote, logger: CapturingLogger, autoMerge: boolean): PullRequestDelivery {
  const client = createForgeClient({ forge, apiUrl: double.apiUrl, repositoryUrl: remote.url, auth: { kind: 'token', token: TOKEN }, logger });
  return new PullRequestDelivery({ forge: client, autoMerge, pollIntervalMs: 50, logger });
}

function run(remote: Remote, deps: Partial<ScaffoldRunDeps> & { logger: CapturingLogger }, id: string, signal?: AbortSignal) {
  return runScaffold(
    { git: new CliGitRemote({ logger: deps.logger }), verify: async () => ({ findings: [] }), workRoot: scratch, ...deps },
    {
      id,
      repositoryUrl: remote.url,
      cluster: CLUSTER,
      certificatePem: certificate.certificatePem,
      generatorVersion: packageVersion(),
      ...(signal ? { signal } : {}),
    },
  );
}

function reviewEvents(logger: CapturingLogger): string[] {
  return logger.lines
    .filter((l) => l.fields.event === 'review_request')
    .map((l) => `${String(l.fields.pass)}:${String(l.fields.action)}:#${String(l.fields.number)}`);
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-delivery-it-'));
  served = join(scratch, 'served');
  await mkdir(join(served, OWNER), { recursive: true });
  seedRepo = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seedRepo, platformDir());
  daemon = await startGitDaemon({ baseDir: served });
  http = await startGitHttpServer({ baseDir: served, username: 'x-access-token', password: TOKEN });
  certificate = createTestCertificate();
});

after(async () => {
  await Promise.all(doubles.map((d) => d.stop()));
  await daemon?.stop();
  await http?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('delivery on a protected main', () => {
  it('refuses a direct push and tells the user to use pull_request mode', async () => {
    const remote = await newRemote();
    const logger = capturingLogger();
    const error = await run(remote, { logger }, 'push-protected').then(
      () => assert.fail('the push must be refused'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof StepError);
    assert.equal(error.step, 3);
    assert.ok(error.cause instanceof ForbiddenError, String(error.cause));
    assert.match(error.message, /main, which is protected/);
    assert.match(error.message, /delivery\.mode "pull_request"/);
    assert.match(error.message, /GH006: Protected branch update failed/);
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha, 'nothing reached main');
  });
});

describe('pull_request delivery through GitHub (Octokit)', () => {
  it('delivers both passes through pull requests, the second built on the merged first', async () => {
    const remote = await newRemote();
    const double = await forgeFor('github', remote);
    const logger = capturingLogger();
    // A reviewer merges each request shortly after it is opened.
    double.onOpened = (pull) => void setTimeout(() => void double.merge(pull.number), 100);
    const result = await run(remote, { logger, delivery: deliveryFor('github', double, remote, logger, false) }, 'pr-both');

    assert.equal(double.pulls.length, 2);
    const [first, second] = double.pulls as [NonNullable<(typeof double.pulls)[0]>, NonNullable<(typeof double.pulls)[0]>];
    assert.deepEqual([first.head, second.head], ['scaffold/eu-prod-1/infrastructure', 'scaffold/eu-prod-1/all']);
    assert.ok(first.merged && second.merged);
    assert.match(first.title, /eu-prod-1: infrastructure layer \(pass 1 of 2\)/);
    assert.match(first.body, /Cluster \*\*eu-prod-1\*\* \(eu-prod-1\.example\.net, eu-west-1\)/);
    assert.match(first.body, /clusters\/eu-prod-1\/flux\/infrastructure\.yaml/);
    assert.match(first.body, /\*\*Verify:\*\* passed: no findings/);
    assert.deepEqual(first.labels, ['gitops-scaffolder', 'scaffold-pass:infrastructure']);

    // main: seed, pass 1, merge #1, pass 2, merge #2; pass 2's parent is merge #1.
    const commits = await commitsOf(remote.dir, 'main', remote.seedSha);
    const [merge2, pass2, merge1, pass1] = commits as [(typeof commits)[0], (typeof commits)[0], (typeof commits)[0], (typeof commits)[0]];
    assert.equal(commits.length, 4);
    assert.equal(merge2!.sha, second.mergeSha);
    assert.equal(merge1!.sha, first.mergeSha);
    assert.equal(pass1!.trailers['Scaffold-Pass'], 'infrastructure');
    assert.equal(pass2!.trailers['Scaffold-Pass'], 'all');
    assert.deepEqual(pass2!.parents, [first.mergeSha]);
    assert.ok(
      sealedSecretsIn(await treeAt(remote.dir, 'main', 'clusters/eu-prod-1')).length >= 3,
      'pass 2 sealed the credentials (no registry pull secret without one supplied)',
    );
    assert.deepEqual(result.commits, [
      { pass: 'infrastructure', sha: first.mergeSha },
      { pass: 'all', sha: second.mergeSha },
    ]);
    assert.deepEqual(reviewEvents(logger), [
      'infrastructure:opened:#1',
      'infrastructure:waiting:#1',
      'infrastructure:merged:#1',
      'all:opened:#2',
      'all:waiting:#2',
      'all:merged:#2',
    ]);
    assert.equal(await git(remote.dir, 'branch', '--list', 'scaffold/*'), '', 'merged branches are deleted');
  });

  it('merges by itself with auto_merge once the checks pass', async () => {
    const remote = await newRemote();
    const double = await forgeFor('github', remote, false);
    const logger = capturingLogger();
    double.onOpened = (pull) => void setTimeout(() => (pull.checksPassed = true), 200);
    await run(remote, { logger, delivery: deliveryFor('github', double, remote, logger, true) }, 'pr-auto');
    assert.ok(double.pulls.every((p) => p.merged));
    const merges = double.calls.filter((c) => c.method === 'PUT' && /\/merge$/.test(c.path));
    assert.deepEqual(
      merges.map((c) => c.status),
      [200, 200],
      'merged only once mergeable (no 405)',
    );
  });

  it('reuses its open request on a rerun instead of opening another', async () => {
    const remote = await newRemote();
    const double = await forgeFor('github', remote);
    const stop = new AbortController();
    double.onOpened = () => void setTimeout(() => stop.abort(new Error('runner stopped')), 100);
    const firstLog = capturingLogger();
    await assert.rejects(
      run(remote, { logger: firstLog, delivery: deliveryFor('github', double, remote, firstLog, false) }, 'pr-rerun', stop.signal),
      StepError,
    );
    assert.equal(double.pulls.length, 1);
    const branchSha = await git(remote.dir, 'rev-parse', 'scaffold/eu-prod-1/infrastructure');

    double.onOpened = () => undefined;
    const logger = capturingLogger();
    await run(remote, { logger, delivery: deliveryFor('github', double, remote, logger, true) }, 'pr-rerun');
    assert.equal(double.pulls.length, 2, 'pass 1 reused #1; only pass 2 opened one');
    assert.deepEqual(reviewEvents(logger).slice(0, 1), ['infrastructure:reused:#1']);
    assert.equal(double.pulls[0]!.mergeSha !== undefined, true);
    const [merge1] = (await commitsOf(remote.dir, `${double.pulls[0]!.mergeSha!}`)).slice(0, 1);
    assert.deepEqual(merge1!.parents[1], branchSha, 'the same head was merged: the rerun pushed nothing new to the open request');
  });

  it('fails the run when a request is closed without being merged', async () => {
    const remote = await newRemote();
    const double = await forgeFor('github', remote);
    double.onOpened = (pull) => void setTimeout(() => double.close(pull.number), 100);
    const logger = capturingLogger();
    const error = await run(remote, { logger, delivery: deliveryFor('github', double, remote, logger, false) }, 'pr-closed').then(
      () => assert.fail('the run must fail'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof StepError);
    assert.equal(error.step, 3);
    assert.ok(error.cause instanceof ConflictError);
    assert.match(
      error.message,
      /request #1 for pass infrastructure \(http:\/\/127\.0\.0\.1:\d+\/acme\/platform-\d+\/pull\/1\) was closed without being merged/,
    );
    assert.equal(await git(remote.dir, 'rev-parse', 'main'), remote.seedSha);
    assert.equal(double.pulls.length, 1, 'pass 2 never started');
    // The run's last word on the request is its state, so the run view shows it closed.
    assert.equal(reviewEvents(logger).at(-1), 'infrastructure:closed:#1');
    const closed = logger.lines.find((l) => l.fields.event === 'review_request' && l.fields.action === 'closed');
    assert.deepEqual([closed?.fields.state, closed?.fields.branch], ['closed', `scaffold/${CLUSTER.name}/infrastructure`]);
  });

  it('honours a secondary rate limit (403 with retry-after) and goes on', async () => {
    const remote = await newRemote();
    const double = await forgeFor('github', remote);
    double.rateLimitNext(1);
    const logger = capturingLogger();
    await run(remote, { logger, delivery: deliveryFor('github', double, remote, logger, true) }, 'pr-limited');
    const [limited, retried] = double.calls as [(typeof double.calls)[0], (typeof double.calls)[0]];
    assert.equal(limited!.status, 403);
    assert.equal(retried!.path, limited!.path, 'the same request again');
    assert.ok(retried!.at - limited!.at >= 1000, `waited ${retried!.at - limited!.at} ms of the 1 s retry-after`);
    assert.ok(double.pulls.every((p) => p.merged));
    const warning = logger.lines.find((l) => l.fields.event === 'forge_rate_limited');
    assert.equal(warning?.fields.kind, 'secondary');
    assert.equal(warning?.fields.retry_after_s, 1);
    assert.ok(!logger.text().includes(TOKEN), 'the token is never logged');
  });

  it('waits for x-ratelimit-reset when the primary budget is spent', async () => {
    const remote = await newRemote();
    const double = await forgeFor('github', remote);
    double.rateLimitNext(1, 1, 'primary');
    const logger = capturingLogger();
    await run(remote, { logger, delivery: deliveryFor('github', double, remote, logger, true) }, 'pr-primary');
    const [limited, retried] = double.calls as [(typeof double.calls)[0], (typeof double.calls)[0]];
    assert.equal(limited!.status, 403);
    assert.equal(retried!.path, limited!.path);
    assert.ok(retried!.at - limited!.at >= 1000, `waited ${retried!.at - limited!.at} ms for the reset`);
    assert.equal(logger.lines.find((l) => l.fields.event === 'forge_rate_limited')?.fields.kind, 'primary');
    assert.ok(double.pulls.every((p) => p.merged));
  });
});

for (const forge of ['gitlab', 'gitea'] as const) {
  describe(`pull_request delivery through ${forge}`, () => {
    it('delivers both passes through merge requests, honouring a 429 retry-after', async () => {
      const remote = await newRemote();
      const double = await forgeFor(forge, remote);
      double.rateLimitNext(1);
      const logger = capturingLogger();
      const result = await run(remote, { logger, delivery: deliveryFor(forge, double, remote, logger, true) }, `pr-${forge}`);
      assert.deepEqual(
        double.pulls.map((p) => [p.head, p.merged, p.labels]),
        [
          ['scaffold/eu-prod-1/infrastructure', true, ['gitops-scaffolder', 'scaffold-pass:infrastructure']],
          ['scaffold/eu-prod-1/all', true, ['gitops-scaffolder', 'scaffold-pass:all']],
        ],
      );
      assert.deepEqual(
        (result.commits ?? []).map((c) => c.sha),
        double.pulls.map((p) => p.mergeSha),
      );
      assert.equal(double.calls[0]!.status, 429);
      assert.ok(double.calls[1]!.at - double.calls[0]!.at >= 1000);
      await eventually('the merged branches are gone', async () => ((await git(remote.dir, 'branch', '--list', 'scaffold/*')) === '' ? true : undefined));
    });
  });
}

describe('the runner CLI', () => {
  async function cli(remote: Remote, args: readonly string[]) {
    const certFile = join(scratch, 'cert.pem');
    await writeFile(certFile, certificate.certificatePem);
    const resultFile = join(await mkdtemp(join(scratch, 'result-')), 'result.json');
    const repoUrl = http.url(`${OWNER}/${remote.name}.git`);
    return runRunner({
      args: [
        '--repo-url',
        repoUrl,
        '--cluster',
        CLUSTER.name,
        '--domain',
        CLUSTER.domain,
        '--region',
        CLUSTER.region,
        '--cert',
        certFile,
        '--result-file',
        resultFile,
        ...args,
      ],
      env: { SCAFFOLD_GIT_TOKEN: TOKEN, TMPDIR: scratch },
      resultFile,
    });
  }

  it('delivers through GitHub pull requests with --delivery pull_request --auto-merge', async () => {
    const remote = await newRemote();
    const double = await forgeFor('github', remote);
    const outcome = await cli(remote, [
      '--delivery',
      'pull_request',
      '--forge',
      'github',
      '--forge-api-url',
      double.apiUrl,
      '--auto-merge',
      '--merge-poll-interval',
      '100ms',
    ]);
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    assert.deepEqual(outcome.result?.commits, [
      { pass: 'infrastructure', sha: double.pulls[0]?.mergeSha },
      { pass: 'all', sha: double.pulls[1]?.mergeSha },
    ]);
    const merged = outcome.events.filter((e) => e.event === 'review_request' && e.action === 'merged').map((e) => e.url);
    assert.equal(merged.length, 2);
    assert.ok(!outcome.stdout.includes(TOKEN) && !outcome.stderr.includes(TOKEN), 'the token is never printed');
  });

  it('fails a direct push to a protected main with a result that points at pull_request mode', async () => {
    const remote = await newRemote();
    const outcome = await cli(remote, []);
    assert.equal(outcome.code, 1, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'failed');
    assert.equal(outcome.result?.step, 3);
    assert.match(
      outcome.result?.message ?? '',
      /refused a direct push to main, which is protected .*delivery\.mode "pull_request" \(runner: --delivery pull_request\)/s,
    );
  });

  it('refuses pull_request without a forge before cloning anything', async () => {
    const remote = await newRemote();
    const outcome = await cli(remote, ['--delivery', 'pull_request']);
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.match(outcome.result?.message ?? '', /--forge: is required with pull_request/);
  });
});
