/**
 * git for tests: the commands a test uses to build or inspect a repository,
 * isolated from the machine's git configuration so a developer's hooks,
 * signing or default branch never change what a test sees.
 */
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { runGit } from '../../src/git/git-process.js';

const IDENTITY = ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false'];

/** `git <args>` in `cwd`, synchronously; stdout as git printed it (not trimmed). */
export function gitSync(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...IDENTITY, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: tmpdir(), LC_ALL: 'C' },
  });
}

/** `git <args>` in `cwd` (a bare repository or a working copy) through the product's own git process; trimmed stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await runGit([...IDENTITY, ...args], { cwd })).stdout.trim();
}
