/**
 * Upgrade rollouts: `POST /api/v1/upgrades` re-renders generated clusters from
 * the current reference in waves (or, with `dry_run`, says what each would
 * change), `GET /api/v1/upgrades/{id}` shows a rollout's waves, each
 * cluster's outcome and where it stopped, `GET /api/v1/upgrades` lists the
 * newest, and `…/cancel` stops one. Wire shapes live here, with the
 * routes (also their part of the OpenAPI document).
 */
import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import { clusterNameSchema } from '../../model/cluster-spec.js';
import type { FleetSource, FleetUpgrade } from '../../service/fleet-source.js';
import { RolloutService } from '../../service/rollout-service.js';
import type { Rollout, RolloutStore } from '../../service/rollout-store.js';
import type { RunRecord } from '../../run/run-record.js';
import { branchSchema } from '../../service/run-service.js';
import type { RouteContext } from '../route-context.js';
import { RUN_STATUSES, errorResponsesOf, repositoryUrlSchema } from '../wire-schemas.js';
import { withoutCredentials } from '../wire-views.js';
import { deliveryView, deliveryViewSchema, fleetDeliveryOf, fleetDeliverySchema } from '../fleet-delivery-wire.js';

const BASE = '/api/v1/upgrades';

export const upgradeRequestSchema = z
  .object({
    clusters: z
      .union([z.literal('all'), z.array(clusterNameSchema).min(1, 'must name at least one cluster').max(5000, 'at most 5000 clusters')])
      .describe('The generated clusters to upgrade, or `"all"` for every generated cluster of the repository.'),
    dry_run: z.boolean().default(false).describe('Say what each cluster would change (a diff summary); write and record nothing.'),
    diff: z
      .boolean()
      .default(false)
      .describe(
        'With `dry_run`: each changed cluster also lists its changed files with their new `content` and `previous_content` (`diff`), as a scaffold dry run does. Ignored without `dry_run`.',
      ),
    wave_size: z
      .number()
      .int()
      .min(1, 'must be at least 1')
      .max(5000)
      .default(1)
      .describe('Clusters per wave; the next wave starts only when every upgrade of the previous one succeeded. Default 1.'),
    repository_url: repositoryUrlSchema.optional().describe("Like a request's repository.url. Default: the service's default repository."),
    branch: branchSchema.optional().describe('Default: main.'),
    delivery: fleetDeliverySchema.optional(),
  })
  .strict();

const previewSchema = z.object({
  dry_run: z.literal(true),
  clusters: z.array(
    z.object({
      name: z.string(),
      status: z.enum(['changed', 'up_to_date', 'failed']),
      files: z.object({ added: z.array(z.string()), modified: z.array(z.string()), removed: z.array(z.string()) }),
      credentials_kept: z.number().int(),
      message: z.string().optional(),
      diff: z
        .array(
          z.object({
            path: z.string(),
            change: z.enum(['added', 'modified', 'removed']),
            content: z.string().optional().describe('The file after the upgrade (added and modified files).'),
            previous_content: z.string().optional().describe('What the branch holds now (modified and removed files).'),
          }),
        )
        .optional()
        .describe('Only when the request asked for `diff`, for a `changed` cluster: its changed files, sorted by path.'),
    }),
  ),
});

const ROLLOUT_STATES = ['running', 'succeeded', 'failed', 'cancelled'] as const;

/** A rollout as the API shows it (the dashboard types its view from this). */
export const rolloutSchema = z.object({
  id: z.string(),
  state: z.enum(ROLLOUT_STATES),
  repository: z.object({ url: z.string(), branch: z.string() }),
  requested_by: z.string(),
  wave_size: z.number().int(),
  waves: z.array(z.array(z.string())),
  clusters: z.array(
    z.object({
      name: z.string(),
      wave: z.number().int(),
      status: z.enum(RUN_STATUSES).describe("`pending` until its wave starts; then its run's status."),
      run_id: z
        .string()
        .optional()
        .describe(
          'The upgrade run of this cluster (GET /api/v1/scaffolds/{id}: its steps, log, commit and pull request); absent until its wave starts, or when the run could not start.',
        ),
      outcome: z.enum(['upgraded', 'up_to_date']).optional().describe('`up_to_date`: nothing to write, no commit.'),
      commit: z.string().optional().describe('The one commit that upgraded this cluster.'),
      added: z.number().int().optional(),
      modified: z.number().int().optional(),
      removed: z.number().int().optional(),
      message: z.string().optional().describe("Why it failed (its run's message)."),
      started_at: z.string().optional().describe('When its run was created (absent until its wave starts).'),
      finished_at: z.string().optional().describe('When its run ended.'),
    }),
  ),
  delivery: deliveryViewSchema.describe("How each run's commit reaches the branch; with pull_request each run opens its own request (see the run)."),
  failure: z
    .object({ wave: z.number().int(), failed: z.array(z.string()), not_started: z.array(z.string()) })
    .optional()
    .describe('Where the rollout stopped: the wave (from 0), its clusters that failed, and those of later waves that never started.'),
  created_at: z.string(),
  finished_at: z.string().optional(),
});

export const rolloutListQuerySchema = z.object({
  state: z.enum(ROLLOUT_STATES).optional().describe('Only rollouts in this state, e.g. `running` to find one to cancel.'),
  limit: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(100, 'must be at most 100').default(20),
});

/** The newest rollouts, each summed up (GET one for its clusters). */
export const rolloutListSchema = z.object({
  rollouts: z.array(
    rolloutSchema.pick({ id: true, state: true, repository: true, requested_by: true, wave_size: true, created_at: true, finished_at: true }).extend({
      waves: z.number().int().describe('How many waves.'),
      clusters: z
        .object({ total: z.number().int() })
        .catchall(z.number().int())
        .describe('How many clusters, and how many are in each status (`pending`, `running`, `succeeded`, `failed`, `cancelled`; absent: none).'),
    }),
  ),
});

/** The fields a rollout and its summary share. */
function headerView(rollout: Rollout) {
  return {
    id: rollout.id,
    state: rollout.state,
    repository: { url: withoutCredentials(rollout.repositoryUrl), branch: rollout.branch },
    requested_by: rollout.requestedBy,
    wave_size: rollout.waveSize,
    created_at: rollout.createdAt.toISOString(),
    ...(rollout.finishedAt !== undefined ? { finished_at: rollout.finishedAt.toISOString() } : {}),
  };
}

function summaryView(rollout: Rollout): z.infer<typeof rolloutListSchema>['rollouts'][number] {
  const statuses = Object.values(rollout.clusters).map((c) => c.status);
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return { ...headerView(rollout), waves: rollout.waves.length, clusters: { total: statuses.length, ...counts } };
}

type PreviewDiff = NonNullable<z.infer<typeof previewSchema>['clusters'][number]['diff']>;

/** A changed cluster's files before and after, for a diff viewer. */
function diffOf(upgrade: FleetUpgrade): PreviewDiff | undefined {
  const { tree, before } = upgrade;
  if (upgrade.status !== 'changed' || tree === undefined || before === undefined) return undefined;
  const files: PreviewDiff = [
    ...upgrade.added.map((path) => ({ path, change: 'added' as const, content: tree.get(path) ?? '' })),
    ...upgrade.modified.map((path) => ({ path, change: 'modified' as const, content: tree.get(path) ?? '', previous_content: before.get(path) ?? '' })),
    ...upgrade.removed.map((path) => ({ path, change: 'removed' as const, previous_content: before.get(path) ?? '' })),
  ];
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function previewView(upgrades: readonly FleetUpgrade[], withDiff: boolean): z.infer<typeof previewSchema> {
  return {
    dry_run: true,
    clusters: upgrades.map((u) => {
      const diff = withDiff ? diffOf(u) : undefined;
      return {
        name: u.name,
        status: u.status,
        files: { added: [...u.added], modified: [...u.modified], removed: [...u.removed] },
        credentials_kept: u.credentialsKept,
        ...(u.message !== undefined ? { message: u.message } : {}),
        ...(diff !== undefined ? { diff } : {}),
      };
    }),
  };
}

/** When each cluster's run started and ended, read from the runs (served from the run cache); a run that cannot be read adds nothing. */
async function runTimesOf(
  rollout: Rollout,
  runs: { get(id: string): Promise<RunRecord> },
): Promise<ReadonlyMap<string, { started_at: string; finished_at?: string }>> {
  const times = new Map<string, { started_at: string; finished_at?: string }>();
  await Promise.all(
    Object.entries(rollout.clusters).map(async ([name, cluster]) => {
      if (cluster.run === undefined) return;
      const run = await runs.get(cluster.run).catch(() => undefined);
      if (run === undefined) return;
      times.set(name, { started_at: run.createdAt.toISOString(), ...(run.finishedAt !== undefined ? { finished_at: run.finishedAt.toISOString() } : {}) });
    }),
  );
  return times;
}

function rolloutView(rollout: Rollout, times: ReadonlyMap<string, { started_at: string; finished_at?: string }> = new Map()): z.infer<typeof rolloutSchema> {
  return {
    ...headerView(rollout),
    waves: rollout.waves.map((w) => [...w]),
    clusters: rollout.waves.flatMap((names, wave) =>
      names.map((name) => {
        const { run, ...cluster } = rollout.clusters[name] ?? { status: 'pending' as const };
        return { name, wave, ...cluster, ...(run !== undefined ? { run_id: run } : {}), ...times.get(name) };
      }),
    ),
    delivery: deliveryView(rollout.delivery),
    ...(rollout.failure !== undefined
      ? { failure: { wave: rollout.failure.wave, failed: [...rollout.failure.failed], not_started: [...rollout.failure.notStarted] } }
      : {}),
  };
}

/** Registers the upgrade routes; without a fleet source and a rollout store they answer 404 saying so. */
export function registerUpgradeRoutes(context: RouteContext, fleetSource: FleetSource | undefined, rolloutStore: RolloutStore | undefined): void {
  const { app, service, callerOf, signalOf } = context;
  const rollouts =
    fleetSource !== undefined && rolloutStore !== undefined
      ? new RolloutService({
          store: rolloutStore,
          fleet: fleetSource,
          runs: service,
          logger: context.logger,
          onRunStarted: () => context.runsCreated.inc({ kind: 'upgrade' }),
        })
      : undefined;
  const available = (): RolloutService => {
    if (rollouts === undefined) throw new NotFoundError('this service does not upgrade fleets (no fleet source or rollout store is configured)');
    return rollouts;
  };
  // Rollouts a stopped service left running go on following their runs; at close the drivers stop following (the runs go on) before the store closes.
  app.addHook('onReady', async () => {
    await rollouts?.resume().catch((error: unknown) => context.logger.error({ err: error }, 'rollouts could not be resumed'));
  });
  app.addHook('onClose', async () => rollouts?.stop());

  app.post(
    BASE,
    {
      schema: {
        summary: 'Upgrade generated clusters from the current reference, in waves',
        description:
          "Each cluster is upgraded by its own run (action `upgrade`: a runner Job, listed under /api/v1/scaffolds with its steps and log): re-rendered with its recorded identity and attributes, its sealed credentials kept byte for byte, verified, and committed on its own (one commit per cluster, trailers naming the run and the cluster); an up-to-date cluster gets no commit. Each run delivers as `delivery` says: pushed, or through its own pull/merge request (branch `scaffold/<cluster>/upgrade`, opened with the service's forge credentials) that must be merged before the run succeeds; a request closed without merge fails the run. A direct push refused by a protected branch fails the run with a message pointing at pull_request mode. 202 with the rollout (`Location` is its URL; each cluster names its `run_id`); a wave starts only when every run of the previous one succeeded, and a failure stops the rollout (`failure`). 409 while one of the clusters has an active run. With `dry_run`: 200 with what each cluster would change; nothing is written or recorded.",
        tags: ['fleet'],
        body: upgradeRequestSchema,
        response: { 200: previewSchema, 202: rolloutSchema, ...errorResponsesOf(400, 404, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const rollout = available();
      const body = request.body;
      // Only the default repository and ALLOWED_REPOSITORY_URLS: planning clones in the service.
      const repository = await context.readableRepository(body);
      const clusters = await rollout.targets({ ...repository, clusters: body.clusters }, signalOf(reply));
      const target = { ...repository, clusters, requestedBy: caller.identity };
      const delivery = fleetDeliveryOf(body.delivery, repository.repositoryUrl);
      if (!body.dry_run) await service.refuseActiveRuns(repository, clusters, 'upgrade');
      if (body.dry_run) return reply.status(200).send(previewView(await rollout.preview(target, signalOf(reply)), body.diff));
      const started = await rollout.start({ ...target, waveSize: body.wave_size, ...(delivery !== undefined ? { delivery } : {}) });
      return reply
        .status(202)
        .header('location', `${BASE}/${started.id}`)
        .send(rolloutView(started, await runTimesOf(started, service)));
    },
  );

  app.get(
    BASE,
    {
      schema: {
        summary: 'The newest upgrade rollouts, newest first',
        description:
          'Each summed up: its state, who started it, its waves and how many clusters are in each status. `?state=running` lists the ones under way (to follow or cancel).',
        tags: ['fleet'],
        querystring: rolloutListQuerySchema,
        response: { 200: rolloutListSchema, ...errorResponsesOf(400, 404) },
      },
    },
    async (request, reply) => {
      const { state, limit } = request.query;
      const rollouts = await available().listRollouts({ limit, ...(state !== undefined ? { state } : {}) });
      void reply.header('cache-control', 'private, no-cache');
      return { rollouts: rollouts.map(summaryView) };
    },
  );

  app.get(
    `${BASE}/:id`,
    {
      schema: {
        summary: 'One upgrade rollout: its waves, each cluster’s outcome, and where it stopped',
        tags: ['fleet'],
        params: z.object({ id: z.string().min(1).max(64) }),
        response: { 200: rolloutSchema, ...errorResponsesOf(400, 404) },
      },
    },
    async (request, reply) => {
      const rollout = await available().getRollout(request.params.id);
      if (rollout === undefined) throw new NotFoundError(`upgrade rollout ${request.params.id} does not exist`);
      void reply.header('cache-control', 'private, no-cache');
      return rolloutView(rollout, await runTimesOf(rollout, service));
    },
  );

  app.post(
    `${BASE}/:id/cancel`,
    {
      schema: {
        summary: 'Cancel an upgrade rollout: no further run starts, and its runs under way are cancelled',
        description:
          'Answers once the rollout is recorded `cancelled` (within about a second): each cluster whose run was under way shows that run `cancelled` with who cancelled it; a run that had already ended keeps its outcome; clusters of later waves stay `pending`, never started. Commits that already landed stay: upgrade those clusters again, or leave them. 409 when the rollout has already ended.',
        tags: ['fleet'],
        params: z.object({ id: z.string().min(1).max(64) }),
        response: { 200: rolloutSchema, ...errorResponsesOf(400, 404, 409) },
      },
    },
    async (request) => {
      const cancelled = await available().cancel(request.params.id, callerOf(request));
      return rolloutView(cancelled, await runTimesOf(cancelled, service));
    },
  );
}
