/**
 * The invariants every fault trial checks, read off the real parts after the
 * faults: the remote's branch (what landed), the runs as recorded (what the
 * service says), and every place a secret could end up. Each returns the
 * counterexamples it found, so the table names the run or commit at fault.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { commitsOf } from '../../test/support/runner.js';

const exec = promisify(execFile);

/** A run as the service recorded it. */
export interface RecordedRun {
  readonly id: string;
  readonly cluster: string;
  readonly attempt: number;
  readonly status: string;
  readonly commits: readonly { readonly pass: string; readonly sha: string }[];
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'canceled']);

/** No stuck run: every run ended (none left pending or running). */
export function stuckRuns(runs: readonly RecordedRun[]): string[] {
  return runs.filter((run) => !TERMINAL.has(run.status)).map((run) => `${run.id} (${run.cluster}) is ${run.status}`);
}

/** The scaffold commits on `branch` of `bare`, oldest first, with the run, pass and cluster their trailers name. */
async function scaffoldCommits(bare: string, branch: string): Promise<{ sha: string; id: string; pass: string; cluster: string; parents: number }[]> {
  return (await commitsOf(bare, branch))
    .filter((c) => c.trailers['Scaffold-Id'] !== undefined)
    .map((c) => ({
      sha: c.sha,
      id: c.trailers['Scaffold-Id'] ?? '',
      pass: c.trailers['Scaffold-Pass'] ?? '',
      cluster: c.trailers['Scaffold-Cluster'] ?? '',
      parents: c.parents.length,
    }))
    .reverse();
}

/** Linear history: no merge commit on the branch. */
export async function nonLinearHistory(bare: string, branch: string): Promise<string[]> {
  const { stdout } = await exec('git', ['rev-list', '--min-parents=2', branch, '--'], { cwd: bare });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((sha) => `merge commit ${sha.slice(0, 12)} on ${branch}`);
}

/** Every run reports exactly the commits on the branch that carry its Scaffold-Id (same passes, same SHAs, same order). */
export async function misreportedRuns(bare: string, branch: string, runs: readonly RecordedRun[]): Promise<string[]> {
  const landed = await scaffoldCommits(bare, branch);
  const found: string[] = [];
  for (const run of runs) {
    const onBranch = landed.filter((c) => c.id === run.id).map((c) => `${c.pass}@${c.sha.slice(0, 12)}`);
    const reported = run.commits.map((c) => `${c.pass}@${c.sha.slice(0, 12)}`);
    if (onBranch.join(',') !== reported.join(','))
      found.push(`${run.id} (${run.cluster}, ${run.status}) reports [${reported.join(',')}], the branch holds [${onBranch.join(',')}]`);
  }
  return found;
}

/** Nothing pushed is lost: every succeeded run reported commits, and each is on the branch. */
export async function lostPushes(bare: string, branch: string, runs: readonly RecordedRun[]): Promise<string[]> {
  const onBranch = new Set((await commitsOf(bare, branch)).map((c) => c.sha));
  const found: string[] = [];
  for (const run of runs.filter((r) => r.status === 'succeeded')) {
    if (run.commits.length === 0) found.push(`${run.id} (${run.cluster}) succeeded without a commit`);
    for (const commit of run.commits) if (!onBranch.has(commit.sha)) found.push(`${run.id}: ${commit.pass} ${commit.sha.slice(0, 12)} is not on ${branch}`);
  }
  return found;
}

/** No doubled run: no run landed one pass twice (two runners of one run), and no run id was recorded twice. */
export async function doubledRuns(bare: string, branch: string, runs: readonly RecordedRun[]): Promise<string[]> {
  const found: string[] = [];
  const ids = runs.map((r) => r.id);
  for (const id of new Set(ids)) if (ids.filter((x) => x === id).length > 1) found.push(`run ${id} recorded twice`);
  const seen = new Map<string, string>();
  for (const commit of await scaffoldCommits(bare, branch)) {
    const key = `${commit.id}/${commit.pass}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) found.push(`${commit.id} landed pass ${commit.pass} twice (${earlier.slice(0, 12)}, ${commit.sha.slice(0, 12)})`);
    seen.set(key, commit.sha);
  }
  return found;
}

/**
 * No cluster pushed by two attempts: along the branch, the commits of one
 * cluster's runs come attempt after attempt (each run's commits together, an
 * earlier attempt never after a later one), so a fenced attempt's push never
 * landed beside or after its retry.
 */
export async function interleavedAttempts(bare: string, branch: string, runs: readonly RecordedRun[]): Promise<string[]> {
  const byId = new Map(runs.map((run) => [run.id, run]));
  const found: string[] = [];
  const history = new Map<string, { id: string; attempt: number; sha: string }[]>();
  for (const commit of await scaffoldCommits(bare, branch)) {
    const run = byId.get(commit.id);
    if (run === undefined) continue;
    const list = history.get(run.cluster) ?? [];
    list.push({ id: run.id, attempt: run.attempt, sha: commit.sha });
    history.set(run.cluster, list);
  }
  for (const [cluster, list] of history) {
    const closed = new Set<string>();
    for (let i = 0; i < list.length; i++) {
      const current = list[i]!;
      const previous = list[i - 1];
      if (previous !== undefined && previous.id !== current.id) {
        closed.add(previous.id);
        if (current.attempt < previous.attempt)
          found.push(`${cluster}: attempt ${current.attempt} (${current.id}) landed ${current.sha.slice(0, 12)} after attempt ${previous.attempt}`);
      }
      if (closed.has(current.id)) found.push(`${cluster}: ${current.id} landed ${current.sha.slice(0, 12)} after another attempt's commit`);
    }
  }
  return found;
}

/** Where each needle occurs in `text` (named `where`), as counterexamples that do not repeat the needle. */
export function needlesIn(text: string, needles: readonly string[], where: string): string[] {
  return needles.filter((needle) => text.includes(needle)).map((needle) => `${where} holds a secret (${needle.length} chars, starts ${needle.slice(0, 3)}…)`);
}

/** The content of every object in the bare repository, unreachable ones included (loose and packed). */
export async function allGitObjects(bare: string): Promise<string> {
  const { stdout } = await exec('git', ['cat-file', '--batch-all-objects', '--unordered', '--batch'], {
    cwd: bare,
    maxBuffer: 1024 * 1024 * 1024,
    encoding: 'latin1',
  });
  return Buffer.from(stdout, 'latin1').toString('utf8');
}
