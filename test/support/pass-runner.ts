/**
 * A stand-in for scaffold-runner that does only what the fence is about: it
 * reads the same `SCAFFOLD_*` environment the executors hand the real runner
 * (run id, attempt, repository, branch, cluster, the landing queue's key, its
 * lease, work and result files), holds its lease, clones, commits one pass of
 * its cluster with the real trailers and pushes it through the real
 * CliGitRemote (landing queue and fence included), with git in its process
 * group and forked as the real runner starts it. Rendering and verify are left out, so a
 * test can kill many runs mid-push in a bounded time.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CliGitRemote } from '../../src/git/cli-git-remote.js';
import { parseQueueKey } from '../../src/git/queue-auth.js';
import { holdLease } from '../../src/run-contract/run-lease.js';
import { RUNNER_ENV } from '../../src/run-contract/runner-inputs.js';
import { useRunnerChildLauncher } from '../../src/process/size-aware-launcher.js';

useRunnerChildLauncher();

const env = process.env;
const need = (name: string): string => {
  const value = env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
};
const id = need(RUNNER_ENV.id);
const cluster = need(RUNNER_ENV.cluster);
const workDir = need(RUNNER_ENV.workDir);
const lease = await holdLease(need(RUNNER_ENV.leaseFile), id);
try {
  const remote = new CliGitRemote({
    gitProcessGroup: 'caller',
    backoff: { baseMs: 20, maxMs: 200 },
    queueAuth: { key: parseQueueKey(need(RUNNER_ENV.queueKey), RUNNER_ENV.queueKey), shared: true, attempt: Number(env[RUNNER_ENV.attempt] ?? '1') },
  });
  const ws = await remote.clone({
    url: need(RUNNER_ENV.repoUrl),
    branch: need(RUNNER_ENV.branch),
    dir: join(workDir, 'repo'),
    sparsePaths: [`clusters/${cluster}`],
  });
  await mkdir(join(ws.dir, 'clusters', cluster), { recursive: true });
  await writeFile(join(ws.dir, 'clusters', cluster, 'kustomization.yaml'), `# written by run ${id}\n`);
  const trailers = { 'Scaffold-Id': id, 'Scaffold-Pass': 'infrastructure', 'Scaffold-Cluster': cluster, 'Scaffold-Reference': 'development' };
  await ws.commit({ paths: [`clusters/${cluster}`], message: `Scaffold ${cluster}`, trailers, author: { name: 'Scaffold Bot', email: 'bot@example.invalid' } });
  const pushed = await ws.push({ maxAttempts: 20 });
  await ws.dispose();
  await writeFile(
    need(RUNNER_ENV.resultFile),
    `${JSON.stringify({ status: 'succeeded', message: 'pushed', commits: [{ pass: 'infrastructure', sha: pushed.sha }] })}\n`,
  );
} finally {
  await lease.release();
}
