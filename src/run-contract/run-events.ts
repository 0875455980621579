/**
 * The runner's events: one JSON object a line on its stdout (pino lines, so
 * they also carry `level`, `time` and the logger's bindings). Read here, once,
 * by the run monitor (progress), the steps view (timeline) and, through the
 * shared types, the dashboard. Parsing is lenient field by field, as the
 * readers always were: a field that does not fit is dropped, not the event.
 */
import { z } from 'zod';
import { RUN_PASSES } from '../model/run-action.js';
import { isStepNumber } from '../model/run-action.js';
import { FORGES } from '../model/forges.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { BATCH_CLUSTER_STATUSES } from '../run/run-record.js';

/** The step events, in the order a step may emit them. */
export const STEP_EVENT_NAMES = ['step_started', 'step_finished', 'step_skipped', 'step_failed'] as const;
export type StepEventName = (typeof STEP_EVENT_NAMES)[number];

/** Longest message an event keeps. */
export const MAX_EVENT_MESSAGE = 2000;

const optional = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const message = optional(z.string().transform((text) => text.slice(0, MAX_EVENT_MESSAGE)));
const stepNumber = optional(z.number().refine(isStepNumber));
const eventTime = optional(
  z
    .union([z.string(), z.number()])
    .transform((value) => new Date(value))
    .refine((date) => !Number.isNaN(date.getTime())),
);
const durationMs = optional(
  z
    .number()
    .refine((n) => Number.isFinite(n) && n >= 0)
    .transform((n) => Math.round(n)),
);
const pass = optional(z.enum(RUN_PASSES));
const sha = optional(z.string().regex(/^[0-9a-f]{7,64}$/));

/** A step started, finished, was skipped or failed. */
export const stepEventSchema = z.object({
  event: z.enum(STEP_EVENT_NAMES),
  step: stepNumber,
  step_name: optional(z.string().transform((name) => name.slice(0, 200))),
  time: eventTime,
  duration_ms: durationMs,
  error_code: optional(z.string().max(64)),
  msg: message,
});

/** A pass was committed (and pushed, or found already on the remote). */
export const commitEventSchema = z.object({ event: z.literal('commit'), pass, sha, pushed: optional(z.boolean()), msg: message });

/** Something the caller should know that did not stop the run. */
export const warningEventSchema = z.object({ event: z.literal('warning'), msg: message });

/** The run ended; its result follows in the result file. */
export const finishedEventSchema = z.object({
  event: z.literal('run_finished'),
  status: optional(z.enum(['succeeded', 'failed', 'cancelled'])),
  step: stepNumber,
  msg: message,
});

/** The result could not be written (e.g. a full disk): the event stream is the only report. */
export const resultNotWrittenEventSchema = z.object({ event: z.literal('result_not_written'), msg: message });

/** The wait for Flux after the last push (`--wait-ready`): each Kustomization's progress, then the outcome. */
export const FLUX_READINESS_EVENT_NAMES = ['flux_ready_wait', 'kustomization', 'flux_ready', 'flux_not_ready'] as const;
export const fluxReadinessEventSchema = z.object({ event: z.enum(FLUX_READINESS_EVENT_NAMES), msg: message });

/**
 * A pass's pull/merge request changed (`pull_request` delivery): opened,
 * reused, waiting, merging or merged. The run keeps the latest of each request.
 * The fields naming the request are required: an event without them says nothing a reader can keep.
 */
export const reviewRequestEventSchema = z.object({
  event: z.literal('review_request'),
  forge: z.enum(FORGES),
  pass: z.enum(RUN_PASSES),
  number: z.number().int().positive(),
  // Only a web page: a value that is not http(s) is never shown as a link.
  url: z
    .string()
    .max(2048)
    .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value)),
  state: z.enum(['open', 'merged', 'closed']),
  branch: optional(z.string().max(255)),
  action: optional(z.string().max(32)),
  time: eventTime,
  msg: message,
});

/** A batch upgrade run: what became of one of its clusters (its commit, when it landed one). */
export const batchClusterEventSchema = z.object({
  event: z.literal('batch_cluster'),
  batch_cluster: clusterNameSchema,
  status: z.enum(BATCH_CLUSTER_STATUSES),
  sha,
  message,
  changes: optional(z.object({ added: z.number().int().min(0), modified: z.number().int().min(0), removed: z.number().int().min(0) })),
  msg: message,
});

/** Every event a reader acts on. Other events (`rendered`, `credential`, `note`, …) are for people. */
export const runEventSchema = z.discriminatedUnion('event', [
  stepEventSchema,
  commitEventSchema,
  warningEventSchema,
  finishedEventSchema,
  resultNotWrittenEventSchema,
  fluxReadinessEventSchema,
  reviewRequestEventSchema,
  batchClusterEventSchema,
]);

export type StepEvent = z.output<typeof stepEventSchema>;
export type CommitEvent = z.output<typeof commitEventSchema>;
export type ReviewRequestEvent = z.output<typeof reviewRequestEventSchema>;
export type RunEvent = z.output<typeof runEventSchema>;

/** The event on `line`, or undefined when the line is no event a reader acts on. */
export function parseRunEvent(line: string): RunEvent | undefined {
  // Cheap refusal first: every event is a JSON object on its line.
  if (!line.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = runEventSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** Whether `event` is a step event. */
export function isStepEvent(event: RunEvent): event is StepEvent {
  return (STEP_EVENT_NAMES as readonly string[]).includes(event.event);
}
