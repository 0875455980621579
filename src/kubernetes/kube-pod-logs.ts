/**
 * Reading a runner pod's log through the API: line by line, following a
 * running container, and resuming a dropped stream where it broke.
 */
import { PassThrough, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { CoreV1Api, Log, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../logger.js';
import { codeOf, unavailable } from './kube-api-error.js';
import { runnerPhase } from './kube-job-state.js';
import { CONTAINER } from './kube-job-manifests.js';

/** Lines of a text stream, without their newline. */
async function* linesOf(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of stream) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, newline).replace(/\r$/, '');
      pending = pending.slice(newline + 1);
    }
  }
  pending += decoder.end();
  if (pending !== '') yield pending;
}

// `timestamps=true` prefixes each line with RFC3339Nano and a space.
const TIMESTAMPED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) ([\s\S]*)$/;

/** An RFC3339(Nano) time as epoch nanoseconds. */
function nanosOf(time: string): bigint {
  const m = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(time);
  const seconds = m ? Date.parse(`${m[1] ?? ''}${m[3] ?? ''}`) : NaN;
  if (!m || Number.isNaN(seconds)) return -1n;
  return BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0') || '0');
}

/** One namespace's runner pod logs. */
export class PodLogReader {
  constructor(
    private readonly podLog: Log,
    private readonly core: CoreV1Api,
    private readonly namespace: string,
    private readonly logger: Logger,
  ) {}

  /**
   * One pod's log lines through client-node's Log (`follow` streams). Lines are
   * requested with timestamps so that, when a follow connection drops while the
   * container still runs, reading resumes at `sinceTime` without repeating lines.
   */
  async *lines(pod: string, follow: boolean, signal: AbortSignal | undefined): AsyncGenerator<string> {
    let last: string | undefined;
    for (;;) {
      const stream = new PassThrough();
      // A write racing an abort must not surface as an unhandled 'error' event.
      stream.on('error', () => {});
      let request: AbortController | undefined;
      const onAbort = (): void => {
        request?.abort();
        stream.end();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        try {
          request = await this.podLog.log(this.namespace, pod, CONTAINER, stream, {
            follow,
            timestamps: true,
            // sinceTime has whole-second precision; lines up to `last` are skipped below.
            ...(last ? { sinceTime: last.replace(/\.\d+/, '') } : {}),
          });
        } catch (error) {
          const code = codeOf(error);
          // 400: the container is not running (yet or any more); 404: the pod is gone.
          if (code === 400 || code === 404) return;
          throw unavailable(`cannot read the log of pod ${this.namespace}/${pod}`, error);
        }
        if (signal?.aborted) return;
        const since = last ? nanosOf(last) : -1n;
        for await (const raw of linesOf(stream)) {
          const m = TIMESTAMPED.exec(raw);
          if (!m) {
            yield raw;
            continue;
          }
          const [, time = '', line = ''] = m;
          if (nanosOf(time) <= since) continue;
          last = time;
          yield line;
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
        request?.abort();
      }
      if (!follow || signal?.aborted) return;
      // The stream ended: either the container exited or the connection dropped.
      let current: V1Pod;
      try {
        current = await this.core.readNamespacedPod({ namespace: this.namespace, name: pod });
      } catch (error) {
        if (codeOf(error) === 404) return;
        throw unavailable(`cannot read pod ${this.namespace}/${pod}`, error);
      }
      if (runnerPhase(current) !== 'running') return;
      this.logger.debug({ pod }, 'log stream ended while the runner still runs; resuming');
    }
  }
}
