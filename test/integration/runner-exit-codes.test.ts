/**
 * Issue 9.7: the runner's exit code tells a Job's backoff policy and a CI step
 * whether retrying can help. 75 is for transient causes only; a host without
 * kubectl, a push target that is not bare, a repository path that does not
 * exist are permanent (1) or bad input (2). A full disk is named as such.
 * Real runner processes, real git, loopback only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { runGit } from '../../src/git/git-process.js';
import { platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { git } from '../support/git.js';
import { describeOutcome, runRunner, type RunnerOutcome } from '../support/runner.js';

let scratch: string;
let seedRepo: string;
let certFile: string;
let copies = 0;

async function bareCopy(): Promise<string> {
  const dir = join(scratch, `remote-${++copies}.git`);
  await git(scratch, 'clone', '--quiet', '--bare', seedRepo, dir);
  return dir;
}

async function run(repoUrl: string, options: { env?: Record<string, string>; resultFile?: string } = {}): Promise<RunnerOutcome> {
  const resultFile = options.resultFile ?? join(await mkdtemp(join(scratch, 'result-')), 'result.json');
  return runRunner({
    args: [
      '--repo-url',
      repoUrl,
      '--cluster',
      'eu-prod-1',
      '--domain',
      'eu-prod-1.example.net',
      '--region',
      'eu-west-1',
      '--cert',
      certFile,
      '--result-file',
      resultFile,
    ],
    env: { TMPDIR: scratch, ...options.env },
    resultFile,
  });
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-exit-codes-'));
  seedRepo = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seedRepo, platformDir());
  certFile = join(scratch, 'cert.pem');
  await writeFile(certFile, createTestCertificate().certificatePem);
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('scaffold-runner exit codes', { concurrency: true }, () => {
  it('a repository path that does not exist is bad input (2), not transient', async () => {
    const outcome = await run(`file://${join(scratch, 'no-such-repository.git')}`);
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.equal(outcome.result?.status, 'failed');
  });

  it('a push target that is not bare is bad input (2), and the message says why', async () => {
    const work = join(scratch, 'checked-out');
    await runGit(['clone', '--quiet', seedRepo, work], { cwd: scratch });
    const outcome = await run(`file://${work}`);
    assert.equal(outcome.code, 2, describeOutcome(outcome));
    assert.match(outcome.result?.message ?? '', /not a bare repository/);
  });

  it('a host without kubectl fails permanently (1): retrying the Job cannot install it', async () => {
    // git on PATH, kubectl not.
    const bin = join(scratch, 'bin-without-kubectl');
    await mkdir(bin);
    const gitPath = (await runGit(['--exec-path'], { cwd: scratch })).stdout.trim();
    await symlink(join(gitPath, 'git'), join(bin, 'git'));
    const outcome = await run(`file://${await bareCopy()}`, { env: { PATH: bin } });
    assert.equal(outcome.code, 1, describeOutcome(outcome));
    assert.match(outcome.result?.message ?? '', /kubectl not found/);
  });

  it('a full disk is reported as "no space left on device" on the event stream, exit 1', async () => {
    // /dev/full fails every write with ENOSPC.
    const outcome = await run(`file://${await bareCopy()}`, { resultFile: '/dev/full' });
    assert.equal(outcome.code, 1, describeOutcome(outcome));
    assert.ok(
      outcome.events.some((e) => e.event === 'result_not_written' && /no space left on device/.test(String(e.msg))),
      describeOutcome(outcome),
    );
  });
});
