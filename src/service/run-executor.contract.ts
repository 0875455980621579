/**
 * The behaviour every `RunExecutor` must show, as a node:test suite,
 * run against the local executor (real child processes) and the Kubernetes
 * executor (through the protocol-faithful API double). An implementation's test
 * file calls {@link runScaffoldExecutorContract} with a way to open the
 * executor and to play a started run's runner: print lines, then end with a
 * result, without one, or not at all.
 */
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RUNNER_ENV } from '../run-contract/runner-inputs.js';
import { parseOutputSource } from './output-source.js';
import type { ExecutionState, RunExecutor } from './run-executor.js';
import { jobNameOf, type RunResult, type RunSecrets, type RunRecord } from '../run/run-record.js';

/** What a started run's runner does. */
export interface RunnerScript {
  /** Printed first, in order. */
  readonly lines: readonly string[];
  /** Written when it ends; none when undefined. */
  readonly result?: RunResult;
  /** @default 0 with a succeeded result, else 1 */
  readonly exitCode?: number;
  /** Keeps running after the lines (until cancelled). */
  readonly hang?: boolean;
}

/** An executor under test. */
export interface ExecutorUnderTest {
  readonly executor: RunExecutor;
  /** Plays the runner of `run`, which has been started; resolves once the lines are out (and the end is reported, unless it hangs). */
  play(run: RunRecord, script: RunnerScript): Promise<void>;
  /**
   * What the runner of a started run finds: its environment, and the content of
   * each file its executor gives it (by path; a mounted Secret's), so the
   * contract reads a value as the runner does (`NAME`, or the file `NAME_FILE`).
   */
  runnerView(run: RunRecord): Promise<{ readonly env: Readonly<Record<string, string>>; readonly files: Readonly<Record<string, string>> }>;
  /** Stops whatever is left and removes what `open` created. */
  cleanup(): Promise<void>;
}

/** A GitHub App a run delivers with (the key is a stand-in: executors only carry it). */
export const CONTRACT_GITHUB_APP = {
  appId: '123456',
  installationId: '7890123',
  privateKey: '-----BEGIN RSA PRIVATE KEY-----\nMIIEcontract-SECRET-app-key\n-----END RSA PRIVATE KEY-----\n',
} as const;

/** A pending run as the service would hand it to an executor (its Job named after its id); executor tests make theirs with it too. */
export function contractRunOf(overrides: Partial<RunRecord> = {}): RunRecord {
  const id = overrides.id ?? randomUUID();
  const now = new Date();
  return {
    id,
    action: 'scaffold',
    cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
    repositoryUrl: 'https://git.example.net/platform/gitops.git',
    branch: 'main',
    reference: 'development',
    status: 'pending',
    step: 0,
    message: '',
    job: jobNameOf(id),
    commits: [],
    attempt: 1,
    createdAt: now,
    updatedAt: now,
    createdBy: 'contract-test',
    sealing: 'certificate',
    ...overrides,
  };
}

const SECRETS: RunSecrets = { certificate: '-----BEGIN CERTIFICATE-----\nnot checked by executors\n-----END CERTIFICATE-----\n' };

/** The runner's own lines of an output: source lines (`output-source.ts`) left out. */
async function runnerLines(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) if (parseOutputSource(line) === undefined) out.push(line);
  return out;
}

async function settled(executor: RunExecutor, run: RunRecord, timeoutMs = 30_000): Promise<ExecutionState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await executor.inspect(run);
    if (state.state !== 'pending' && state.state !== 'running') return state;
    if (Date.now() > deadline) throw new Error(`run ${run.id} is still ${state.state}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Registers the RunExecutor contract suite under `name`.
 *
 * @param open - returns the executor under test; called once, before the suite's tests
 */
export function runScaffoldExecutorContract(name: string, open: () => Promise<ExecutorUnderTest>): void {
  describe(`RunExecutor contract: ${name}`, () => {
    let opened: ExecutorUnderTest | undefined;
    const under = (): ExecutorUnderTest => {
      if (!opened) throw new Error('executor not open');
      return opened;
    };

    before(async () => {
      opened = await open();
    });
    after(async () => {
      await opened?.cleanup();
    });

    it('knows nothing of a run it never started', async () => {
      assert.deepEqual(await under().executor.inspect(contractRunOf()), { state: 'missing' });
    });

    it('starts a run once: a second start returns the same job, and the run is active until its runner ends', async () => {
      const { executor } = under();
      const run = contractRunOf();
      const first = await executor.start(run, SECRETS);
      assert.equal(first.job, jobNameOf(run.id));
      assert.deepEqual(await executor.start(run, SECRETS), first);
      assert.ok(['pending', 'running'].includes((await executor.inspect(run)).state));
      await under().play(run, { lines: [], result: { status: 'succeeded', message: 'done', commits: [], step: 7 } });
      assert.equal((await settled(executor, run)).state, 'succeeded');
    });

    it("reports the runner's result and replays its lines, in order, from the start", async () => {
      const { executor } = under();
      const run = contractRunOf();
      await executor.start(run, SECRETS);
      const lines = [
        '{"event":"step_started","step":1,"step_name":"clone","msg":"cloning"}',
        'plain output',
        '{"event":"step_finished","step":1,"step_name":"clone"}',
      ];
      const result: RunResult = {
        status: 'succeeded',
        message: 'scaffolded',
        gitops_path: 'clusters/eu-prod-1',
        commits: [{ pass: 'all', sha: 'c'.repeat(40) }],
        step: 7,
      };
      await under().play(run, { lines, result });
      assert.deepEqual(await settled(executor, run), { state: 'succeeded', result });
      assert.deepEqual(await runnerLines(executor.logs(run, { follow: false })), lines);
      assert.deepEqual(await runnerLines(executor.logs(run, { follow: true })), lines, 'following a run that ended replays it and ends');
    });

    it('reports a failed result as failed, with its message and step', async () => {
      const { executor } = under();
      const run = contractRunOf();
      await executor.start(run, SECRETS);
      const result: RunResult = { status: 'failed', message: 'step 3 (push-infrastructure) failed: remote unreachable', commits: [], step: 3 };
      await under().play(run, { lines: [], result });
      assert.deepEqual(await settled(executor, run), { state: 'failed', result });
    });

    it('reports a runner that ended without a result as failed, with a message', async () => {
      const { executor } = under();
      const run = contractRunOf();
      await executor.start(run, SECRETS);
      await under().play(run, { lines: ['{"event":"step_started","step":2,"msg":"rendering"}'], exitCode: 1 });
      const state = await settled(executor, run);
      assert.equal(state.state, 'failed');
      assert.ok(state.state === 'failed' && state.result.message.length > 0);
    });

    it('hands the runner its delivery and the GitHub App (id, installation id, private key), read as the runner reads them', async () => {
      const { executor } = under();
      const run = contractRunOf({
        repositoryUrl: 'https://github.com/acme/platform-gitops.git',
        delivery: { mode: 'pull_request', forge: 'github', autoMerge: true },
      });
      await executor.start(run, { ...SECRETS, githubApp: CONTRACT_GITHUB_APP });
      const { env, files } = await under().runnerView(run);
      // The runner's rule (runner-cli fromEnvOrFile): the file named by NAME_FILE wins, else NAME.
      const read = (name: string): string | undefined => {
        const file = env[`${name}_FILE`];
        return file === undefined ? env[name] : files[file];
      };
      assert.equal(read(RUNNER_ENV.githubAppId), CONTRACT_GITHUB_APP.appId);
      assert.equal(read(RUNNER_ENV.githubAppInstallationId), CONTRACT_GITHUB_APP.installationId);
      assert.equal(read(RUNNER_ENV.githubAppPrivateKey), CONTRACT_GITHUB_APP.privateKey);
      assert.deepEqual([env.SCAFFOLD_DELIVERY, env.SCAFFOLD_FORGE, env.SCAFFOLD_AUTO_MERGE], ['pull_request', 'github', 'true']);
      await under().play(run, { lines: [], result: { status: 'succeeded', message: 'done', commits: [], step: 7 } });
      assert.equal((await settled(executor, run)).state, 'succeeded');
    });

    it('gives a run without a GitHub App none of its variables', async () => {
      const { executor } = under();
      const run = contractRunOf();
      await executor.start(run, SECRETS);
      const { env } = await under().runnerView(run);
      assert.deepEqual(
        Object.keys(env).filter((name) => name.startsWith('SCAFFOLD_GITHUB_APP')),
        [],
      );
      await under().play(run, { lines: [], result: { status: 'succeeded', message: 'done', commits: [], step: 7 } });
      assert.equal((await settled(executor, run)).state, 'succeeded');
    });

    it('hands an upgrade run its action and no secret it was not given, and records its changes', async () => {
      const { executor } = under();
      const run = contractRunOf({ action: 'upgrade', sealing: 'none' });
      await executor.start(run, {});
      const { env, files } = await under().runnerView(run);
      assert.equal(env[RUNNER_ENV.action], 'upgrade');
      assert.deepEqual(Object.values(files), [], 'no secret file');
      for (const name of [RUNNER_ENV.certificatePem, RUNNER_ENV.kubeconfigData, RUNNER_ENV.gitToken, RUNNER_ENV.certificateFile, RUNNER_ENV.kubeconfigFile])
        assert.equal(env[name], undefined, name);
      const changes = { added: 0, modified: 2, removed: 0, credentialsKept: 4 };
      await under().play(run, {
        lines: [],
        result: { status: 'succeeded', message: 'upgraded', commits: [{ pass: 'upgrade', sha: 'a'.repeat(40) }], step: 3, changes },
      });
      const state = await settled(executor, run);
      assert.ok(state.state === 'succeeded');
      assert.deepEqual(state.result.changes, changes);
      assert.deepEqual(state.result.commits, [{ pass: 'upgrade', sha: 'a'.repeat(40) }]);
    });

    it('is the fence: after cancel resolves, the run is no longer active, so nothing of it may still push', async () => {
      const { executor } = under();
      const run = contractRunOf();
      await executor.start(run, SECRETS);
      await under().play(run, { lines: ['{"event":"step_started","step":4,"msg":"waiting"}'], hang: true });
      assert.ok(['pending', 'running'].includes((await executor.inspect(run)).state));
      await executor.cancel(run);
      const state = (await executor.inspect(run)).state;
      assert.ok(state !== 'pending' && state !== 'running', `after cancel the run is ${state}`);
      await executor.cancel(run); // idempotent
    });
  });
}
