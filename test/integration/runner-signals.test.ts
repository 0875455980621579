/**
 * Ctrl-C under the README's documented command, `node --import tsx
 * src/runner-cli.ts …`: the terminal signals the whole foreground process group
 * (the runner and its git or kubectl), and a busy child may ignore it. The run
 * must still end as a cancelled run: exit 143, a result that says so, and no
 * working copy left behind. (The README no longer documents `npx tsx`: tsx's
 * wrapper process SIGKILLs a child that has not answered its relayed signal
 * within 30 ms, and a runner busy rendering cannot, so it died with nothing
 * written.) Real processes in their own process group, real git; loopback only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { REPO_ROOT } from '../support/runner.js';

let scratch: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gs-runner-signals-'));
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('scaffold-runner interrupted from a terminal', () => {
  it('Ctrl-C (SIGINT to the whole process group) ends the run cancelled: exit 143, its result written, its working copy removed', async () => {
    const repo = join(scratch, 'gitops.git');
    await ensureSeededBareRepository(repo, platformDir());
    const certFile = join(scratch, 'cert.pem');
    await writeFile(certFile, createTestCertificate().certificatePem);
    // A kubectl that ignores the Ctrl-C (as a busy child may) and is slow: the run is
    // inside its verify step when the signal comes, and must still end by itself.
    const shims = join(scratch, 'bin');
    await mkdir(shims);
    const realPath = process.env['PATH'] ?? '/usr/bin:/bin';
    await writeFile(join(shims, 'kubectl'), `#!/bin/sh\ntrap '' INT\nsleep 3\nPATH='${realPath}' exec kubectl "$@"\n`);
    await chmod(join(shims, 'kubectl'), 0o755);
    const work = join(scratch, 'tmp');
    await mkdir(work);
    const resultFile = join(scratch, 'result.json');

    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/runner-cli.ts',
        '--repo-url',
        repo,
        '--cluster',
        'eu-int-1',
        '--domain',
        'eu-int-1.example.net',
        '--region',
        'eu-west-1',
        '--cert',
        certFile,
        '--result-file',
        resultFile,
      ],
      {
        cwd: REPO_ROOT,
        // Its own process group, as a terminal's foreground job: the signal goes to every process in it.
        detached: true,
        env: { PATH: `${shims}:${realPath}`, HOME: scratch, TMPDIR: work, LC_ALL: 'C' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('close', (code, signal) => resolve({ code, signal })),
    );
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group has already ended.
      }
    };
    const deadline = setTimeout(() => killGroup('SIGKILL'), 90_000);
    try {
      // The verify of pass 1 runs kubectl: interrupt then.
      const started = Date.now();
      while (!stdout.includes('"step_name":"render-infrastructure"') || !stdout.includes('"event":"step_started"')) {
        if (child.exitCode !== null || Date.now() - started > 60_000) assert.fail(`the run did not reach its render step:\n${stdout}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      killGroup('SIGINT');
      // A wrapper in the group (npm, tsx) relays its own copy a moment later: the same request, not a
      // second one. Sent once the first was handled (the step failed on it): two pending copies of one
      // signal would be merged by the kernel into one.
      const first = Date.now();
      while (!stdout.includes('"event":"step_failed"') && child.exitCode === null && Date.now() - first < 30_000) await new Promise((r) => setTimeout(r, 5));
      if (child.exitCode === null) process.kill(child.pid!, 'SIGINT');
      const { code, signal } = await exited;
      assert.equal(code, 143, `exit ${code} ${signal}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
      assert.doesNotMatch(stderr, /exiting without cleaning up/);
      const result = JSON.parse(
        await readFile(resultFile, 'utf8').catch(() => assert.fail(`no result written\n--- stdout\n${stdout}\n--- stderr\n${stderr}`)),
      ) as { status: string; message: string };
      assert.equal(result.status, 'failed');
      assert.match(result.message, /the runner received SIGINT/);
      assert.match(stdout, /"event":"run_finished","status":"cancelled"/);
      // tsx keeps its compile cache in TMPDIR too; nothing else may remain.
      assert.deepEqual(
        (await readdir(work)).filter((name) => !name.startsWith('tsx-')),
        [],
        'the working copy is removed',
      );
    } finally {
      clearTimeout(deadline);
      killGroup('SIGKILL');
    }
  });
});
