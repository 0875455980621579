import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type ChildLauncher, type ChildRequest, ChildStartError, directLauncher } from './child-launcher.js';
import { HelperLauncher } from './spawn-helper.js';

const env = { PATH: process.env['PATH'] };
const sh = (script: string, more: Partial<ChildRequest> = {}): ChildRequest => ({
  command: 'sh',
  args: ['-c', script],
  cwd: tmpdir(),
  env,
  ownGroup: true,
  ...more,
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const pidIn = (file: string) => until(async () => Number((await readFile(file, 'utf8').catch(() => '')).trim()) || undefined, `a pid in ${file}`);

const helper = new HelperLauncher();
after(() => helper.close());

for (const [name, launcher] of [
  ['direct', directLauncher],
  ['helper', helper],
] as const satisfies readonly (readonly [string, ChildLauncher])[]) {
  describe(`${name} launcher`, () => {
    it('returns what the child wrote and its exit code, feeding it its input', async () => {
      const outcome = await launcher.start(sh('cat; echo "ü on stderr" >&2; exit 3', { input: 'ä from stdin\n' })).outcome;
      assert.deepEqual(outcome, { stdout: 'ä from stdin\n', stderr: 'ü on stderr\n', code: 3, signal: null, overflow: false });
    });

    it('gives the child exactly the environment and working directory asked for', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'launcher-'));
      try {
        const outcome = await launcher.start(sh('pwd; echo "$ONLY_THIS:${HOME-unset}"', { cwd: dir, env: { ...env, ONLY_THIS: 'yes' } })).outcome;
        assert.equal(outcome.stdout, `${dir}\nyes:unset\n`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('rejects with the errno name when the program or the directory does not exist', async () => {
      await assert.rejects(launcher.start({ ...sh(''), command: 'no-such-program-here' }).outcome, (error: unknown) => {
        assert.ok(error instanceof ChildStartError);
        assert.equal(error.code, 'ENOENT');
        return true;
      });
      await assert.rejects(launcher.start(sh('true', { cwd: join(tmpdir(), 'no-such-dir-here') })).outcome, { code: 'ENOENT' });
      await assert.rejects(launcher.start(sh('true', { args: ['-c', 'nul\0byte'] })).outcome, ChildStartError);
    });

    it('kills the whole group of a child with a group of its own, and only the child otherwise', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'launcher-'));
      try {
        const grandchild = join(dir, 'grandchild');
        const running = launcher.start(sh(`sleep 60 & echo $! > ${grandchild}; wait`));
        const pid = await pidIn(grandchild);
        running.kill();
        assert.equal((await running.outcome).signal, 'SIGKILL');
        await until(async () => (alive(pid) ? undefined : true), 'the grandchild to die with its group');

        const loner = join(dir, 'loner');
        // Its stdio elsewhere: the child's pipes close when the child dies, not when the sleep ends.
        const inCaller = launcher.start(sh(`sleep 60 >/dev/null 2>&1 & echo $! > ${loner}; wait`, { ownGroup: false }));
        const survivor = await pidIn(loner);
        inCaller.kill();
        assert.equal((await inCaller.outcome).signal, 'SIGKILL');
        assert.ok(alive(survivor), 'a child in the caller group is killed alone');
        process.kill(survivor, 'SIGKILL');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('kills a child that writes more than its stdout budget, and keeps stderr within its own', async () => {
      const flood = await launcher.start(sh('yes 0123456789', { maxStdoutBytes: 100_000 })).outcome;
      assert.equal(flood.overflow, true);
      assert.equal(flood.stdout, '');
      assert.equal(flood.signal, 'SIGKILL');
      const noisy = await launcher.start(sh('head -c 300000 /dev/zero | tr "\\0" x >&2; echo done', { maxStderrBytes: 65_536 })).outcome;
      assert.equal(noisy.stdout, 'done\n');
      assert.ok(noisy.stderr.length >= 65_536 && noisy.stderr.length < 300_000, `kept ${noisy.stderr.length} bytes of stderr`);
    });
  });
}

describe('the spawn helper', () => {
  it('forks the children itself, not the process that asked', async () => {
    const parent = Number((await helper.start(sh('echo $PPID')).outcome).stdout.trim());
    assert.notEqual(parent, process.pid);
    const direct = Number((await directLauncher.start(sh('echo $PPID')).outcome).stdout.trim());
    assert.equal(direct, process.pid);
  });

  it('fails the children in flight when it dies, and is started again for the next one', async () => {
    const launcher = new HelperLauncher();
    const dir = await mkdtemp(join(tmpdir(), 'launcher-'));
    let orphan: number | undefined;
    try {
      const helperPid = Number((await launcher.start(sh('echo $PPID')).outcome).stdout.trim());
      const file = join(dir, 'pid');
      const running = launcher.start(sh(`echo $$ > ${file}; sleep 60`));
      // The helper has started the child: it is the one in flight.
      orphan = await pidIn(file);
      process.kill(helperPid, 'SIGKILL');
      await assert.rejects(running.outcome, /the spawn helper stopped \(SIGKILL\)/);
      const next = Number((await launcher.start(sh('echo $PPID')).outcome).stdout.trim());
      assert.ok(next !== helperPid && next !== process.pid, 'a new helper started the next child');
    } finally {
      launcher.close();
      // A helper killed outright cannot end its children: this one's group is ended here.
      if (orphan !== undefined) process.kill(-orphan, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('kills the children of a parent that went away, groups and all', async () => {
    const launcher = new HelperLauncher();
    const dir = await mkdtemp(join(tmpdir(), 'launcher-'));
    try {
      const file = join(dir, 'pid');
      const orphaned = launcher.start(sh(`sleep 60 & echo $! > ${file}; wait`));
      orphaned.outcome.catch(() => undefined);
      const pid = await pidIn(file);
      launcher.close();
      await until(async () => (alive(pid) ? undefined : true), "the child's group to be killed with the helper");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('kills the children of a parent that was killed outright, groups and all', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'launcher-'));
    const module = new URL('./spawn-helper.ts', import.meta.url).href;
    const file = join(dir, 'pid');
    // The parent starts a child with a group of its own (as git runs), then is killed with no chance to clean up.
    const script = `const { childLauncher } = await import(${JSON.stringify(module)});
childLauncher().start({ command: 'sh', args: ['-c', 'sleep 60 & echo $! > ${file}; wait'], cwd: '/', env: { PATH: process.env.PATH }, ownGroup: true });
setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'ignore' });
    try {
      const pid = await pidIn(file);
      parent.kill('SIGKILL');
      await until(async () => (alive(pid) ? undefined : true), 'the child to die with its parent');
    } finally {
      parent.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('does not keep its parent alive once the children are done', async () => {
    const module = new URL('./spawn-helper.ts', import.meta.url).href;
    const script = `const { childLauncher } = await import(${JSON.stringify(module)});
const outcome = await childLauncher().start({ command: 'sh', args: ['-c', 'echo hi'], cwd: '/', env: { PATH: process.env.PATH }, ownGroup: true }).outcome;
process.stdout.write(outcome.stdout);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 20_000 });
    assert.equal(stdout, 'hi\n');
  });
});
