/**
 * Files of the data directory that hold a secret (the API token, the landing
 * queue's key): readable by their owner only, however they came to exist.
 */
import { randomBytes } from 'node:crypto';
import { chmod, rename, stat, writeFile } from 'node:fs/promises';

/**
 * Writes `text` to `file` as a 0600 file. writeFile's mode applies only to a
 * file it creates: writing over an existing 0644 file would leave the secret
 * readable by others. A new 0600 file renamed over it never is.
 */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  const fresh = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(fresh, text, { mode: 0o600, flag: 'wx' });
  await rename(fresh, file);
}

/** A file made by hand (or copied) may be readable by others: keep its secret, not their access. */
export async function keepPrivate(file: string): Promise<void> {
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
}
