/**
 * What a runner Job's status and its pods say about the run: the runner
 * container's phase, whether the Job has finished, and the runner's result,
 * read from the termination message of its newest pod (the result JSON; under
 * FallbackToLogsOnError the tail of its log when it died before writing one).
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { lastEventOf, parseRunResult } from '../run-contract/run-result.js';
import type { ExecutionState } from '../service/run-executor.js';
import { CONTAINER } from './kube-job-manifests.js';

export function byCreation(a: V1Pod, b: V1Pod): number {
  const ta = a.metadata?.creationTimestamp?.getTime() ?? 0;
  const tb = b.metadata?.creationTimestamp?.getTime() ?? 0;
  return ta - tb || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

export type ContainerPhase = 'waiting' | 'running' | 'terminated';

export function runnerPhase(pod: V1Pod): ContainerPhase {
  const state = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state;
  if (state?.terminated) return 'terminated';
  if (state?.running) return 'running';
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 'terminated';
  return 'waiting';
}

export function isFinished(job: V1Job): 'Complete' | 'Failed' | undefined {
  const conditions = job.status?.conditions ?? [];
  if (conditions.some((c) => c.type === 'Failed' && c.status === 'True')) return 'Failed';
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return 'Complete';
  return undefined;
}

/** The outcome of a finished Job (`finished`), from its pods in creation order. */
export function finishedStateOf(job: V1Job, finished: 'Complete' | 'Failed', pods: readonly V1Pod[]): ExecutionState {
  const terminated = pods
    .map((p) => p.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state?.terminated)
    .filter((t) => t !== undefined)
    .at(-1);
  const reported = parseRunResult(terminated?.message);
  if (finished === 'Complete') {
    if (reported?.status === 'succeeded') return { state: 'succeeded', result: reported };
    if (reported) return { state: 'failed', result: reported };
    return { state: 'failed', result: { status: 'failed', message: 'the runner exited successfully but wrote no result' } };
  }
  if (reported?.status === 'failed') return { state: 'failed', result: reported };
  const condition = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  const cause = [condition?.reason, condition?.message].filter(Boolean).join(': ') || 'the Job failed';
  const event = lastEventOf((terminated?.message ?? '').split('\n'));
  return {
    state: 'failed',
    result: {
      ...(reported ?? {}),
      status: 'failed',
      message: event.message ? `${cause}; last event: ${event.message}` : cause,
      ...(event.step !== undefined && reported?.step === undefined ? { step: event.step } : {}),
    },
  };
}
