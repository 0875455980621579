/**
 * The directory a command's --repo names: a file or a missing path is bad input
 * (a ValidationError, exit 2, naming the flag), refused before any git or
 * file operation is attempted on it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { existingDirectory } from './cli-io.js';

describe('existingDirectory', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'cli-io-'));
    await writeFile(join(tmp, 'a-file'), 'not a repository\n');
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('returns the absolute path of a directory', async () => {
    assert.equal(await existingDirectory(tmp), tmp);
  });

  it('refuses a file with a ValidationError naming the flag', async () => {
    await assert.rejects(
      existingDirectory(join(tmp, 'a-file'), '--work-tree'),
      (error: unknown) => error instanceof ValidationError && error.message === `--work-tree: ${join(tmp, 'a-file')} is not a directory`,
    );
  });

  it('refuses a path that does not exist with a ValidationError naming --repo', async () => {
    await assert.rejects(
      existingDirectory(join(tmp, 'nowhere')),
      (error: unknown) => error instanceof ValidationError && error.message === `--repo: ${join(tmp, 'nowhere')} does not exist`,
    );
  });
});
