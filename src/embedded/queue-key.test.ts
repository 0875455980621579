import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUEUE_KEY_FILE, ensureQueueKey } from './queue-key.js';

describe('embedded queue key', () => {
  it('is created 0600 in the data directory at first start and reused after; a damaged file is replaced', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gs-queue-key-'));
    try {
      const key = await ensureQueueKey(dir);
      assert.match(key, /^[0-9a-f]{64}$/);
      assert.equal((await stat(join(dir, QUEUE_KEY_FILE))).mode & 0o777, 0o600);
      assert.equal(await ensureQueueKey(dir), key, 'a restart keeps the key, so runs started before it are still recognized');
      await writeFile(join(dir, QUEUE_KEY_FILE), 'short\n');
      const replaced = await ensureQueueKey(dir);
      assert.match(replaced, /^[0-9a-f]{64}$/);
      assert.equal((await readFile(join(dir, QUEUE_KEY_FILE), 'utf8')).trim(), replaced);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ends readable by its owner only, replaced or kept, in a file others could read (writeFile sets a mode only when it creates)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gs-queue-key-'));
    const file = join(dir, QUEUE_KEY_FILE);
    try {
      await writeFile(file, 'short\n', { mode: 0o644 });
      await chmod(file, 0o644);
      const replaced = await ensureQueueKey(dir);
      assert.equal((await stat(file)).mode & 0o777, 0o600, 'a damaged 0644 file replaced');
      await chmod(file, 0o644);
      assert.equal(await ensureQueueKey(dir), replaced, 'a good key in a 0644 file is kept');
      assert.equal((await stat(file)).mode & 0o777, 0o600, 'and its file made private');
      assert.deepEqual(await readdir(dir), [QUEUE_KEY_FILE], 'no temporary file left behind');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('takes group access away too: a good key in a 0640 file is kept and made 0600', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gs-queue-key-'));
    const file = join(dir, QUEUE_KEY_FILE);
    try {
      const key = 'ab'.repeat(32);
      await writeFile(file, `${key}\n`, { mode: 0o640 });
      await chmod(file, 0o640);
      assert.equal(await ensureQueueKey(dir), key);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails with the read error, and replaces nothing, when the key file cannot be read (anything but a missing file)', async () => {
    // A new key in place of one that exists would orphan every run signed with the old one.
    const dir = await mkdtemp(join(tmpdir(), 'gs-queue-key-'));
    try {
      await mkdir(join(dir, QUEUE_KEY_FILE));
      await assert.rejects(ensureQueueKey(dir), { code: 'EISDIR', syscall: 'read' });
      assert.ok((await stat(join(dir, QUEUE_KEY_FILE))).isDirectory());
      assert.deepEqual(await readdir(dir), [QUEUE_KEY_FILE]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
