/**
 * The landing queue's key in embedded mode (`git/queue-auth.ts`): generated at
 * first start, kept in the data directory (0600, beside the API token), and
 * reused on every later start, so a run started before a restart is still
 * recognized by the commits it signed. Never printed or logged.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateQueueKey } from '../git/queue-auth.js';
import { keepPrivate, writePrivateFile } from './private-file.js';

/** The file name under the data directory. */
export const QUEUE_KEY_FILE = 'queue-key';

/** Loads the key in `dataDir`, generating it on first use. */
export async function ensureQueueKey(dataDir: string): Promise<string> {
  const file = join(dataDir, QUEUE_KEY_FILE);
  try {
    const key = (await readFile(file, 'utf8')).trim();
    // A truncated or hand-edited file falls through to a fresh key.
    if (/^[0-9a-f]{64}$/.test(key)) {
      await keepPrivate(file);
      return key;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = generateQueueKey();
  await writePrivateFile(file, `${key}\n`);
  return key;
}
