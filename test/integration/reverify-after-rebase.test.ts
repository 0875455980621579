/**
 * The verify gate after a push lost a race: a run whose push was overtaken
 * rebases onto the concurrent commit, and verifies again only when that commit
 * changed something the run's verify reads (base/, the reference, scaffold.yaml,
 * layer paths). Real git: a bare remote on disk, the real CliGitRemote, the
 * real verifier (`kubectl kustomize`, the CRD schemas).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWorkTreeVerifier } from '../../src/workspace/verify-work-tree.js';
import { CliGitRemote } from '../../src/git/cli-git-remote.js';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { runScaffold, StepError, verifierFor, type WorkTreeVerifier } from '../../src/runner/run-scaffold.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { capturingLogger } from '../support/runner.js';
import { git } from '../support/git.js';

let scratch: string;
let seed: string;
let certificatePem: string;
const realVerify = verifierFor(createWorkTreeVerifier());

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-reverify-'));
  seed = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seed, platformDir());
  certificatePem = createTestCertificate({ bits: 2048 }).certificatePem;
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let remotes = 0;

/**
 * Scaffolds `cluster` into a fresh copy of the seeded remote. Just before the
 * second pass's push (its verify has passed) another writer pushes `concurrent`
 * to main, so that push is rejected and rebased.
 */
async function raceOnce(cluster: string, concurrent: (work: string) => Promise<void>) {
  const bare = join(scratch, `remote-${++remotes}.git`);
  await git(scratch, 'clone', '--quiet', '--bare', seed, bare);
  await git(bare, 'config', 'uploadpack.allowFilter', 'true');
  const verified: string[] = [];
  let raced: string | undefined;
  const verify: WorkTreeVerifier = async (dir, name, signal) => {
    const report = await realVerify(dir, name, signal);
    verified.push(report.findings.length === 0 ? 'passed' : 'failed');
    if (verified.length === 2 && raced === undefined) {
      // Pass 2 verified: now someone else gets to main first.
      const work = join(scratch, `other-${remotes}`);
      await git(scratch, 'clone', '--quiet', bare, work);
      await concurrent(work);
      await git(work, 'add', '--all');
      await git(work, 'commit', '--quiet', '-m', 'concurrent change');
      await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
      raced = await git(work, 'rev-parse', 'HEAD');
    }
    return report;
  };
  const logger = capturingLogger();
  const outcome = await runScaffold(
    { git: new CliGitRemote(), verify, logger, workRoot: scratch },
    {
      id: `race-${remotes}`,
      repositoryUrl: bare,
      cluster: { name: cluster, domain: `${cluster}.example.net`, region: 'eu-west-1' },
      certificatePem,
      generatorVersion: '0.0.0-test',
    },
  ).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  const reverify = logger.lines.filter((line) => line.fields['event'] === 'reverify');
  return { bare, verified, raced, outcome, reverify };
}

describe('verify gate after a rebase onto a concurrent push', () => {
  it('keeps the verdict when the concurrent commit only touched another cluster', async () => {
    const race = await raceOnce('eu-one', async (work) => {
      await mkdir(join(work, 'clusters', 'someone-else'), { recursive: true });
      await writeFile(join(work, 'clusters', 'someone-else', 'notes.yaml'), 'note: another cluster\n');
    });
    assert.equal(race.outcome.error, undefined, String(race.outcome.error));
    assert.deepEqual(race.verified, ['passed', 'passed'], 'no third verify: the rebase changed nothing verify reads');
    assert.deepEqual(
      race.reverify.map((line) => line.fields['verified']),
      [false],
    );
    // Pushed on top of the concurrent commit, linearly.
    assert.equal(await git(race.bare, 'rev-parse', 'main~1'), race.raced);
    assert.equal(await git(race.bare, 'rev-list', '--merges', '--count', 'main'), '0');
  });

  it('verifies again when the concurrent commit changed base/, and pushes the good tree', async () => {
    const race = await raceOnce('eu-two', async (work) => {
      await appendFile(join(work, 'base', 'apps', 'kustomization.yaml'), '# a harmless edit to a shared input\n');
    });
    assert.equal(race.outcome.error, undefined, String(race.outcome.error));
    assert.deepEqual(race.verified, ['passed', 'passed', 'passed']);
    assert.deepEqual(
      race.reverify.map((line) => line.fields['verified']),
      [true],
    );
    assert.equal(await git(race.bare, 'rev-parse', 'main~1'), race.raced);
  });

  it('blocks the push when the concurrent commit broke base/', async () => {
    const race = await raceOnce('eu-three', async (work) => {
      // A resource that does not exist: every overlay of base/apps fails to build.
      await writeFile(
        join(work, 'base', 'apps', 'kustomization.yaml'),
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - does-not-exist.yaml\n',
      );
    });
    assert.ok(race.outcome.error instanceof StepError, `the run failed: ${String(race.outcome.error)}`);
    assert.equal(race.outcome.error.step, 7);
    assert.match(race.outcome.error.message, /verif|does-not-exist/i);
    assert.deepEqual(race.verified, ['passed', 'passed', 'failed']);
    // The remote holds the concurrent commit; the run's second pass never left.
    assert.equal(await git(race.bare, 'rev-parse', 'main'), race.raced);
  });
});
