/**
 * The runner's result: the JSON it writes to its result file (local executor)
 * or termination message (Kubernetes Job) when it ends. Parsed here, once, for
 * every reader.
 */
import { z } from 'zod';
import { ERROR_CODES } from '../errors.js';
import { RUN_PASSES } from '../model/run-action.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { BATCH_CLUSTER_STATUSES, RESULT_MAX_BYTES, type RunResult } from '../run/run-record.js';

/** The result JSON. */
export const runResultSchema = z.object({
  status: z.enum(['succeeded', 'failed']),
  message: z.string().default(''),
  gitops_path: z.string().optional(),
  commits: z.array(z.object({ pass: z.enum(RUN_PASSES), sha: z.string(), cluster: clusterNameSchema.optional() })).optional(),
  /** An upgrade's or a removal's file counts. */
  changes: z
    .object({
      added: z.number().int().min(0),
      modified: z.number().int().min(0),
      removed: z.number().int().min(0),
      credentialsKept: z.number().int().min(0).optional(),
      kept: z.array(z.string()).max(10_000).optional(),
    })
    .optional(),
  /** The step the run was on when it ended. */
  step: z.number().int().min(0).optional(),
  /** A failed run: its error code and whether a retry may succeed (`failureOf`). */
  error_code: z.enum(ERROR_CODES).optional(),
  transient: z.boolean().optional(),
  /** A batch upgrade run: each cluster's status. */
  batch: z.record(clusterNameSchema, z.enum(BATCH_CLUSTER_STATUSES)).optional(),
});

export { RESULT_MAX_BYTES } from '../run/run-record.js';

/**
 * `result` made to fit in `maxBytes` of JSON (and its newline): first the
 * tail of a removal's kept-file list goes (the run's log and the DELETE
 * answer have the whole list; the message says how many were kept), then the
 * end of the message (a long list of verification findings), marked `…`.
 * Status, commits and counts always stay.
 */
export function boundedResult(result: RunResult, maxBytes = RESULT_MAX_BYTES): RunResult {
  const sizeOf = (r: RunResult): number => Buffer.byteLength(`${JSON.stringify(r)}\n`, 'utf8');
  let excess = sizeOf(result) - maxBytes;
  if (excess <= 0) return result;
  let bounded = result;
  const kept = result.changes?.kept;
  if (result.changes !== undefined && kept !== undefined && kept.length > 0) {
    let count = kept.length;
    // Each path costs its JSON string and a comma.
    for (let freed = 0; count > 0 && freed < excess; count--) freed += Buffer.byteLength(JSON.stringify(kept[count - 1]), 'utf8') + 1;
    bounded = { ...result, changes: { ...result.changes, kept: kept.slice(0, count) } };
    excess = sizeOf(bounded) - maxBytes;
  }
  if (excess <= 0) return bounded;
  // Characters are cut, bytes counted: one character is 1 to 6 bytes in the JSON, so cut by the bytes still over / 6 until it fits.
  let message = bounded.message;
  for (
    let over = sizeOf({ ...bounded, message: `${message}…` }) - maxBytes;
    over > 0 && message.length > 0;
    over = sizeOf({ ...bounded, message: `${message}…` }) - maxBytes
  ) {
    message = message.slice(0, Math.max(0, message.length - Math.max(1, Math.floor(over / 6))));
  }
  return { ...bounded, message: `${message}…` };
}

/** The result in `text`, or undefined when `text` is not a result (empty, cut short, malformed). */
export function parseRunResult(text: string | undefined): RunResult | undefined {
  if (!text) return undefined;
  try {
    const parsed = runResultSchema.safeParse(JSON.parse(text.trim()));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The last thing a runner said, from its output lines (JSON events): the
 * message and step of the last event that has one. What a run that ended
 * without a result is recorded with.
 */
export function lastEventOf(lines: Iterable<string>): { message?: string; step?: number } {
  for (const line of [...lines].reverse()) {
    if (!line.startsWith('{')) continue;
    try {
      const event = JSON.parse(line) as Record<string, unknown>;
      const text = typeof event['msg'] === 'string' ? event['msg'] : typeof event['message'] === 'string' ? event['message'] : undefined;
      const step = typeof event['step'] === 'number' ? event['step'] : undefined;
      if (text !== undefined || step !== undefined) return { ...(text ? { message: text } : {}), ...(step !== undefined ? { step } : {}) };
    } catch {
      // not a JSON event line
    }
  }
  return {};
}
