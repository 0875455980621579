/**
 * Finding the commit a scaffold pass landed as, from the trailers the runner
 * writes (`Scaffold-Pass`, `Scaffold-Cluster`). A rerun that has nothing left
 * to commit reports these, so its result names the same commits the first run
 * pushed rather than whatever commit touched the cluster last.
 */
import { dirname } from 'node:path';
import { runGit } from './git-process.js';
import type { RunPass } from '../model/run-action.js';

/**
 * The newest commit on HEAD that touched `clusters/<cluster>` and carries the
 * trailers `Scaffold-Pass: <pass>` and `Scaffold-Cluster: <cluster>`.
 *
 * @param cluster - a validated cluster name (a DNS-1123 label: no regex metacharacters but "-")
 * @returns its SHA, or undefined when there is none or `dir` is not a git working copy
 */
export async function passCommitOf(dir: string, cluster: string, pass: RunPass): Promise<string | undefined> {
  if (!/^[a-z0-9-]+$/.test(cluster)) return undefined;
  const result = await runGit(
    [
      'log',
      '-1',
      '--format=%H',
      '--extended-regexp',
      '--all-match',
      `--grep=^Scaffold-Pass: ${pass}$`,
      `--grep=^Scaffold-Cluster: ${cluster}$`,
      'HEAD',
      '--',
      `clusters/${cluster}`,
    ],
    // A directory that is not a repository must not fall back to an enclosing one.
    { cwd: dir, env: { GIT_CEILING_DIRECTORIES: dirname(dir) }, okExitCodes: [0, 128] },
  ).catch(() => undefined);
  const sha = result?.exitCode === 0 ? result.stdout.trim() : '';
  return /^[0-9a-f]{40,64}$/.test(sha) ? sha : undefined;
}
