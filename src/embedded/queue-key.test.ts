import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
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
});
