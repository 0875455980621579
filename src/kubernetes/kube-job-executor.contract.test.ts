/**
 * The executor contract (service/run-executor.contract.ts) against the
 * Kubernetes executor, through the protocol-faithful API double: the runner's
 * pod, its log, its termination message and the Job's conditions are played
 * the way the Job controller and the kubelet would report them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubeApiDouble, type JsonObject } from '../../test/support/kube-api-double.js';
import { runScaffoldExecutorContract } from '../service/run-executor.contract.js';
import { jobNameOf } from '../run/run-record.js';
import { loadKubeConfig } from './kube-config.js';
import { KubeJobExecutor } from './kube-job-executor.js';

const NS = 'scaffolds';

runScaffoldExecutorContract('KubeJobExecutor', async () => {
  const double = await startKubeApiDouble();
  const dir = await mkdtemp(join(tmpdir(), 'kube-executor-contract-'));
  const kubeConfig = loadKubeConfig({ kind: 'file', path: await double.writeKubeconfig(dir) });
  const executor = new KubeJobExecutor({ kubeConfig, namespace: NS, image: 'registry.example.net/runner:1', pollIntervalMs: 25 });
  return {
    executor,
    async play(run, script) {
      const job = jobNameOf(run.id);
      const pod = double.addPodForJob(NS, job, { phase: 'Running', logLines: [...script.lines] });
      if (script.hang) {
        double.setJobStatus(NS, job, { active: 1, ready: 1 });
        return;
      }
      const exitCode = script.exitCode ?? (script.result?.status === 'succeeded' ? 0 : 1);
      double.setPodPhase(NS, pod, exitCode === 0 ? 'Succeeded' : 'Failed', {
        exitCode,
        ...(script.result === undefined ? {} : { terminationMessage: JSON.stringify(script.result) }),
      });
      double.setJobStatus(
        NS,
        job,
        exitCode === 0
          ? { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] }
          : { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] },
      );
    },
    async runnerView(run) {
      // The runner's container environment, and the Job's Secret as the kubelet mounts it: one file per key.
      const name = jobNameOf(run.id);
      const pod = ((double.getObject('jobs', NS, name) as JsonObject)['spec'] as { template: { spec: JsonObject } }).template.spec;
      const container = (pod['containers'] as { env?: { name: string; value?: string }[]; volumeMounts?: { name: string; mountPath: string }[] }[])[0];
      const volume = (pod['volumes'] as { name: string; secret?: { secretName: string } }[]).find((v) => v.secret?.secretName === name);
      const mount = container?.volumeMounts?.find((m) => m.name === volume?.name)?.mountPath;
      const data = ((double.getObject('secrets', NS, name) as JsonObject | undefined)?.['data'] ?? {}) as Record<string, string>;
      return {
        env: Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value ?? ''])),
        files:
          mount === undefined
            ? {}
            : Object.fromEntries(Object.entries(data).map(([key, value]) => [`${mount}/${key}`, Buffer.from(value, 'base64').toString('utf8')])),
      };
    },
    async cleanup() {
      await double.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
