/**
 * Whether a name is a valid branch name, by git's own definition
 * (`git check-ref-format refs/heads/<name>`), and not one that reads as an
 * option. The names branches usually have (letters, digits, ".", "_", "-" and
 * "/" between non-empty parts that do not start or end with a dot and do not
 * end in ".lock") are a subset of what git accepts and are answered here,
 * without starting git once per clone; anything else is left to git.
 */
import { tmpdir } from 'node:os';
import { runGit } from './git-process.js';

/** Every name this accepts, git accepts too (git-check-ref-format(1), rules 1 to 10). */
function plainlyValid(branch: string): boolean {
  if (!/^[A-Za-z0-9._/-]+$/.test(branch) || branch.includes('..')) return false;
  return branch.split('/').every((part) => part !== '' && !part.startsWith('.') && !part.endsWith('.') && !part.endsWith('.lock'));
}

export async function isValidBranchName(branch: string): Promise<boolean> {
  if (branch.startsWith('-')) return false;
  if (plainlyValid(branch)) return true;
  return (await runGit(['check-ref-format', `refs/heads/${branch}`], { cwd: tmpdir(), okExitCodes: [0, 1] })).exitCode === 0;
}
