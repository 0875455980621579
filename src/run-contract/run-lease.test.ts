/**
 * The owner lease is what keeps a restarted service from declaring lost, or
 * retrying beside, a runner that may still push. A mutation campaign found its
 * protections unwatched: these tests fail when one is removed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdLease, processAlive, readLease } from './run-lease.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('run lease', () => {
  it('is renewed with a new seq each time, so a reader sees a working runner as fresh', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-lease-'));
    try {
      const path = join(dir, 'lease.json');
      const held = await holdLease(path, 'run-1', 20);
      const first = await readLease(path);
      assert.equal(first?.run_id, 'run-1');
      assert.equal(first?.pid, process.pid);
      const seen = new Set<number | undefined>([first?.seq]);
      const deadline = Date.now() + 3000;
      while (seen.size < 3 && Date.now() < deadline) {
        await sleep(10);
        seen.add((await readLease(path))?.seq);
      }
      assert.ok(seen.size >= 3, `the seq changes with each renewal (${[...seen].join(', ')})`);
      await held.release();
      assert.equal(existsSync(path), false, 'released: the file is gone');
      await sleep(60);
      assert.equal(existsSync(path), false, 'and no renewal writes it again');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads an unreadable or malformed lease as none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-lease-'));
    try {
      const path = join(dir, 'lease.json');
      assert.equal(await readLease(path), undefined);
      await writeFile(path, '{"run_id":"r","pid":-1,"renewed_at":"now"}');
      assert.equal(await readLease(path), undefined);
      await writeFile(path, `${JSON.stringify({ run_id: 'r', pid: 4242, renewed_at: new Date().toISOString(), seq: 3 })}\n`);
      assert.deepEqual(await readLease(path), { run_id: 'r', pid: 4242, renewed_at: JSON.parse(await readFile(path, 'utf8')).renewed_at, seq: 3 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reads a hostile lease as none: pid 0 (the reader's own process group), a renewal time that is no time", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-lease-'));
    try {
      const path = join(dir, 'lease.json');
      const valid = { run_id: 'r', pid: 4242, renewed_at: new Date().toISOString(), seq: 3 };
      // Signal 0 to pid 0 reaches the reader's own group: such a lease would always look alive, and be killed as the reader's group.
      for (const hostile of [
        { ...valid, pid: 0 },
        { ...valid, pid: 1.5 },
        { ...valid, renewed_at: 'yesterday' },
        { ...valid, seq: -1 },
        { ...valid, run_id: 7 },
      ]) {
        await writeFile(path, JSON.stringify(hostile));
        assert.equal(await readLease(path), undefined, JSON.stringify(hostile));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('lets the lease lapse quietly when it cannot be written, and still releases', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-lease-'));
    try {
      const runDir = join(dir, 'run');
      await mkdir(runDir);
      const path = join(runDir, 'lease.json');
      const held = await holdLease(path, 'run-1', 10);
      // The run's directory goes (a full or removed volume): every renewal fails from now on. Moved away in one
      // step: a recursive rm raced the renewals, which could write a new temporary file before its rmdir.
      await rename(runDir, join(dir, 'gone'));
      await sleep(60);
      await held.release();
      assert.equal(existsSync(path), false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('counts a process that exists but belongs to someone else (EPERM) as alive, and only a missing one (ESRCH) as gone', (t) => {
    const fail = (code: string) => () => {
      throw Object.assign(new Error(code), { code });
    };
    t.mock.method(process, 'kill', fail('EPERM'));
    assert.equal(processAlive(4242), true, 'a runner of another user may still push');
    t.mock.method(process, 'kill', fail('ESRCH'));
    assert.equal(processAlive(4242), false);
    t.mock.restoreAll();
    assert.equal(processAlive(process.pid), true);
  });
});
