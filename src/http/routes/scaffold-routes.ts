/**
 * Starting, listing, reading, cancelling and retrying scaffold runs (and dry
 * runs). Routes only translate between the wire and the service.
 */
import { isFinal, type RunRecord } from '../../run/run-record.js';
import type { RunStep } from '../../service/run-steps.js';
import { API, type RouteContext } from '../route-context.js';
import {
  acceptedSchema,
  createQuerySchema,
  dryRunSchema,
  errorResponsesOf,
  idParamsSchema,
  listQuerySchema,
  listSchema,
  retryRequestSchema,
  runDetailSchema,
  runViewSchema,
  scaffoldRequestSchema,
} from '../wire-schemas.js';
import { acceptedView, dryRunView, runView, secretsOf, stepView, toScaffoldRequest } from '../wire-views.js';

/** Final runs never change again: their step timelines are kept (at most this many) instead of re-read from the log. */
const FINAL_STEPS_CACHE = 1000;

const RETRY_DESCRIPTION = [
  'Retries a failed or cancelled run as a NEW run: a new id and job, the same cluster, repository, branch and reference,',
  "and `attempt` one more than the retried run's. The retried run keeps its status and logs.",
  'The service never stores secrets, so the body must carry them again (the same fields and rules as a new request:',
  'one of `kubeconfig` or `sealing.certificate`, and `repository.credentials` if the repository needs them).',
  'A run that is still active or that succeeded cannot be retried (409).',
].join(' ');
/** Registers the scaffold run routes. */
export function registerScaffoldRoutes(context: RouteContext): void {
  const { app, service, runsCreated, callerOf, signalOf } = context;

  app.post(
    API,
    {
      schema: {
        summary: 'Start a scaffold run',
        description:
          'Validates the request, stores a pending run and starts it: 202 with the run id and its job; poll the Location. With `?dry_run=true`, answers 200 with the files the run would write: nothing is stored or pushed.',
        tags: ['scaffolds'],
        querystring: createQuerySchema,
        body: scaffoldRequestSchema,
        response: { 200: dryRunSchema, 202: acceptedSchema, ...errorResponsesOf(400, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const scaffoldRequest = toScaffoldRequest(request.body);
      if (request.query.dry_run === 'true') {
        const result = await service.dryRun(scaffoldRequest, signalOf(reply));
        return reply.status(200).send(dryRunView(scaffoldRequest, result));
      }
      const run = await service.create(scaffoldRequest, caller);
      runsCreated.inc({ kind: 'create' });
      return reply.status(202).header('location', `${API}/${run.id}`).send(acceptedView(run));
    },
  );

  app.get(
    API,
    {
      schema: {
        summary: 'List scaffold runs, newest first',
        tags: ['scaffolds'],
        querystring: listQuerySchema,
        response: { 200: listSchema, ...errorResponsesOf(400) },
      },
    },
    async (request) => {
      const { cluster, repository_url: repositoryUrl, branch, status, limit, cursor } = request.query;
      const page = await service.list({
        limit: limit ?? 50,
        ...(cluster ? { cluster } : {}),
        ...(repositoryUrl ? { repositoryUrl } : {}),
        ...(branch ? { branch } : {}),
        ...(status ? { status } : {}),
        ...(cursor ? { cursor } : {}),
      });
      return { items: page.runs.map(runView), ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor }) };
    },
  );

  // Steps of final runs, which never change again; oldest first.
  const finalSteps = new Map<string, readonly RunStep[]>();
  const stepsOf = async (run: RunRecord): Promise<readonly RunStep[]> => {
    const known = finalSteps.get(run.id);
    if (known !== undefined) return known;
    // The service keeps each run's step events and reads only lines it has not seen.
    const steps = await service.steps(run);
    if (isFinal(run.status)) {
      finalSteps.set(run.id, steps);
      if (finalSteps.size > FINAL_STEPS_CACHE) finalSteps.delete(finalSteps.keys().next().value as string);
    }
    return steps;
  };

  app.get(
    `${API}/:id`,
    {
      schema: {
        summary: 'A scaffold run: status, step, message, gitops_path, commits, and the seven steps',
        tags: ['scaffolds'],
        params: idParamsSchema,
        response: { 200: runDetailSchema, ...errorResponsesOf(400, 404) },
      },
    },
    async (request) => {
      const run = await service.get(request.params.id);
      return { ...runView(run), steps: (await stepsOf(run)).map(stepView) };
    },
  );

  app.post(
    `${API}/:id/cancel`,
    {
      schema: {
        summary: 'Cancel an active run',
        description: 'Records the run as cancelled and stops its job. 409 when it is already final.',
        tags: ['scaffolds'],
        params: idParamsSchema,
        response: { 200: runViewSchema, ...errorResponsesOf(400, 404, 409) },
      },
    },
    async (request) => runView(await service.cancel(request.params.id, callerOf(request))),
  );

  app.post(
    `${API}/:id/retry`,
    {
      schema: {
        summary: 'Retry a failed or cancelled run',
        description: RETRY_DESCRIPTION,
        tags: ['scaffolds'],
        params: idParamsSchema,
        body: retryRequestSchema,
        response: { 202: acceptedSchema, ...errorResponsesOf(400, 404, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const run = await service.retry(request.params.id, { secrets: secretsOf(request.body) }, callerOf(request));
      runsCreated.inc({ kind: 'retry' });
      return reply.status(202).header('location', `${API}/${run.id}`).send(acceptedView(run));
    },
  );
}
