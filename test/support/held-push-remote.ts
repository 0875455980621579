/**
 * Test support: a seeded bare GitOps remote whose post-receive hook holds a
 * runner's push until the test releases it, so a test can act (kill the
 * service, stop the database) while a real runner is mid-run.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { platformDir } from '../../src/package-paths.js';
import { git } from './git.js';
import { eventually } from './runner.js';

/** A remote with a held push. */
export interface HeldPushRemote {
  /** The bare repository. */
  readonly path: string;
  /** Resolves once a push has reached the remote (and is held there). */
  pushed(timeoutMs?: number): Promise<void>;
  /** Lets the held push, and every later one, complete. */
  release(): Promise<void>;
}

/** Creates the remote under `scratch`. */
export async function heldPushRemote(scratch: string): Promise<HeldPushRemote> {
  const seed = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seed, platformDir());
  const path = join(scratch, 'remote.git');
  const marks = join(scratch, 'marks');
  await mkdir(marks);
  await git(scratch, 'clone', '--quiet', '--bare', seed, path);
  await writeFile(join(path, 'hooks', 'post-receive'), `#!/bin/sh\ntouch '${marks}/pushed'\nwhile [ ! -e '${marks}/release' ]; do sleep 0.1; done\n`);
  await chmod(join(path, 'hooks', 'post-receive'), 0o755);
  return {
    path,
    async pushed(timeoutMs = 120_000) {
      await eventually('a push to reach the remote', () => (existsSync(join(marks, 'pushed')) ? true : undefined), timeoutMs);
    },
    release: () => writeFile(join(marks, 'release'), ''),
  };
}
