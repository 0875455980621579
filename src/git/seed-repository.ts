/**
 * Creating a platform repository from a shipped reference platform: the
 * `generate-gitops-env init` command and the embedded service's default
 * repository both start here.
 */
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mkdtemp } from 'node:fs/promises';
import { ConflictError } from '../errors.js';
import { runGit } from './git-process.js';
import { DEFAULT_BRANCH } from '../model/defaults.js';

/** Author of the seed commit. */
const SEED_IDENTITY = {
  GIT_AUTHOR_NAME: 'gitops-scaffolder',
  GIT_AUTHOR_EMAIL: 'gitops-scaffolder@localhost',
  GIT_COMMITTER_NAME: 'gitops-scaffolder',
  GIT_COMMITTER_EMAIL: 'gitops-scaffolder@localhost',
};

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/**
 * Makes `dir` a new Git repository (branch `main`) holding the platform at
 * `platformDir`, committed.
 *
 * @returns the seed commit's SHA
 * @throws ConflictError when `dir` exists and is not empty (nothing is overwritten)
 */
export async function initPlatformRepository(dir: string, platformDir: string, options: { branch?: string } = {}): Promise<string> {
  if (!(await isEmptyOrMissing(dir))) throw new ConflictError(`${dir} exists and is not empty; init only creates new repositories`);
  const branch = options.branch ?? DEFAULT_BRANCH;
  await mkdir(dir, { recursive: true });
  try {
    await cp(platformDir, dir, { recursive: true });
    await runGit(['init', '--quiet', `--initial-branch=${branch}`], { cwd: dir });
    await runGit(['add', '--all'], { cwd: dir });
    await runGit(['commit', '--quiet', '--message', 'Seed the platform repository with the reference platform\n\nWritten by gitops-scaffolder init.'], {
      cwd: dir,
      env: SEED_IDENTITY,
    });
    return (await runGit(['rev-parse', 'HEAD'], { cwd: dir })).stdout.trim();
  } catch (error) {
    // Nothing half-written: a failed init leaves no repository behind.
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Makes `dir` a bare repository seeded with the platform, unless it already is
 * one (then it is left as it is).
 *
 * @returns whether the repository was created now
 */
export async function ensureSeededBareRepository(dir: string, platformDir: string, options: { branch?: string } = {}): Promise<boolean> {
  if (!(await isEmptyOrMissing(dir))) return false;
  const work = await mkdtemp(join(tmpdir(), 'gitops-seed-'));
  try {
    await initPlatformRepository(join(work, 'repo'), platformDir, options);
    await mkdir(dir, { recursive: true });
    await runGit(['clone', '--quiet', '--bare', join(work, 'repo'), dir], { cwd: work });
    // Partial clones (--filter=blob:none) of this repository need the server to allow filters.
    await runGit(['config', 'uploadpack.allowFilter', 'true'], { cwd: dir });
    await runGit(['config', 'uploadpack.allowAnySHA1InWant', 'true'], { cwd: dir });
    await runGit(['config', 'receive.denyNonFastForwards', 'true'], { cwd: dir });
    return true;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
