/**
 * The runner's result: the JSON it writes to its result file (local executor)
 * or termination message (Kubernetes Job) when it ends. Parsed here, once, for
 * every reader.
 */
import { z } from 'zod';
import { RUN_PASSES } from '../model/run-action.js';
import type { RunResult } from '../service/scaffold-run.js';

/** The result JSON. */
export const runResultSchema = z.object({
  status: z.enum(['succeeded', 'failed']),
  message: z.string().default(''),
  gitops_path: z.string().optional(),
  commits: z.array(z.object({ pass: z.enum(RUN_PASSES), sha: z.string() })).optional(),
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
});

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
