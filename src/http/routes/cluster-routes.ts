/**
 * The fleet: every cluster of a repository with its provenance and whether it
 * is behind the reference (`GET /api/v1/clusters`, also in the Flux Operator's
 * ExternalService input shape), one cluster with its SealedSecrets (and,
 * through `sealing-check-route.ts`, which are sealed with an older
 * certificate), and decommissioning one as a run.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { clusterView, resourceSetInputs } from '../../fleet/cluster-view.js';
import { sealingView } from '../../fleet/sealing-freshness.js';
import type { ControllerCertificateSource } from '../../service/controller-certificate-source.js';
import type { FleetSource } from '../../service/fleet-source.js';
import type { RunService } from '../../service/run-service.js';
import type { RunStatus, RunRecord } from '../../run/run-record.js';
import {
  clusterParamsSchema,
  clusterQuerySchema,
  clusterViewSchema,
  clustersQuerySchema,
  fleetSchema,
  removalPreviewSchema,
  removalSchema,
  removeClusterQuerySchema,
} from '../cluster-schemas.js';
import { API, type RouteContext } from '../route-context.js';
import { errorResponsesOf, kubeconfigSchema, readyTimeoutSchema } from '../wire-schemas.js';
import { acceptedView, secretsOf, withoutCredentials } from '../wire-views.js';
import { deliveryView, fleetDeliveryOf, fleetDeliverySchema } from '../fleet-delivery-wire.js';
import { registerSealingCheckRoute, type SealingComparison } from './sealing-check-route.js';

const BASE = '/api/v1/clusters';
/** Why a GET's sealing section has no controller certificate. */
const NOT_ASKED = "the controller is not asked on GET: POST /api/v1/clusters/{name}/sealing-check with the cluster's kubeconfig or its certificate";

/** How long a removal deleting the data waits for Flux to apply the lift, when the caller says nothing. */
const DEFAULT_LIFT_TIMEOUT_SECONDS = 900;

/** A DELETE's optional JSON body. */
export const removeClusterBodySchema = z
  .object({
    delivery: fleetDeliverySchema.optional(),
    delete_data: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe(
        "Delete the data too: the objects marked kustomize.toolkit.fluxcd.io/prune: disabled (stateful namespaces, StatefulSets, volumes). The run first pushes a commit lifting that mark, waits until the cluster's Flux has applied it (read with `kubeconfig`), then pushes the removal: Flux reconciles only the newest revision and prunes by the mark on the in-cluster object, so a removal landing before the lift is applied keeps the data. Needs `kubeconfig`; pushed only (no pull_request delivery).",
      ),
    kubeconfig: kubeconfigSchema
      .optional()
      .describe("The cluster's kubeconfig, for delete_data: the run reads its Flux Kustomizations through it. Used for this run only, never stored."),
    lift_timeout_seconds: readyTimeoutSchema
      .optional()
      .describe(
        `With delete_data: how long the run waits for Flux to apply the lift before it fails without removing anything. Default: ${DEFAULT_LIFT_TIMEOUT_SECONDS}.`,
      ),
  })
  .strict();

/**
 * A DELETE body's data removal, checked before anything is planned: deleting the
 * data needs the cluster's kubeconfig, since the removal may land only once the
 * cluster's Flux has applied the lift (the run reads its Kustomizations).
 * @throws ValidationError for delete_data without kubeconfig, or kubeconfig / lift_timeout_seconds without delete_data
 */
function dataRemovalOf(
  body: z.infer<typeof removeClusterBodySchema> | null | undefined,
): { kubeconfig: NonNullable<ReturnType<typeof secretsOf>['kubeconfig']>; timeoutSeconds: number } | undefined {
  if (body?.delete_data !== true) {
    const stray = (['kubeconfig', 'lift_timeout_seconds'] as const).filter((field) => body?.[field] !== undefined);
    if (stray.length > 0) throw new ValidationError(stray.map((field) => ({ field, message: 'is only used with delete_data: true' })));
    return undefined;
  }
  const { kubeconfig } = secretsOf({ ...(body.kubeconfig !== undefined ? { kubeconfig: body.kubeconfig } : {}) });
  if (kubeconfig === undefined) {
    throw new ValidationError([
      {
        field: 'kubeconfig',
        message:
          "is required with delete_data: the run pushes the lifting of the prune protection first and must see the cluster's Flux apply it before it pushes the removal (Flux reconciles only the newest revision, so a removal landing first would keep the data)",
      },
    ]);
  }
  return { kubeconfig, timeoutSeconds: body.lift_timeout_seconds ?? DEFAULT_LIFT_TIMEOUT_SECONDS };
}

/** How many recent runs are looked at for the fleet's last runs (pages of 100). */
const RECENT_RUNS = 1000;

/** The run the service last started for a cluster (the dashboard reads this shape too). */
export interface LastRunView {
  readonly id: string;
  readonly status: RunStatus;
  readonly created_at: string;
  readonly finished_at?: string;
  readonly commit?: string;
}

function lastRunView(run: RunRecord): LastRunView {
  const commit = run.commits.at(-1)?.sha;
  return {
    id: run.id,
    status: run.status,
    created_at: run.createdAt.toISOString(),
    ...(run.finishedAt !== undefined ? { finished_at: run.finishedAt.toISOString() } : {}),
    ...(commit !== undefined ? { commit } : {}),
  };
}

/** The newest run of each cluster in this repository and branch, among the service's recent runs. */
async function lastRuns(service: RunService, repositoryUrl: string, branch: string, cluster?: string): Promise<Map<string, RunRecord>> {
  const newest = new Map<string, RunRecord>();
  let cursor: string | undefined;
  for (let seen = 0; seen < RECENT_RUNS;) {
    // The store narrows to this repository (in its stored form) and branch: a cluster is its name there.
    const page = await service.list({
      limit: 100,
      repositoryUrl,
      branch,
      ...(cluster !== undefined ? { cluster } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const run of page.runs) {
      if (!newest.has(run.cluster.name)) newest.set(run.cluster.name, run);
    }
    seen += page.runs.length;
    if (page.nextCursor === undefined || page.runs.length === 0 || cluster !== undefined) break;
    cursor = page.nextCursor;
  }
  return newest;
}

/** Registers the fleet routes; without a fleet source they answer 404 saying so. */
export function registerClusterRoutes(context: RouteContext, fleetSource: FleetSource | undefined, certificates?: ControllerCertificateSource): void {
  const { app, service, callerOf, signalOf } = context;
  const source = (): FleetSource => {
    if (fleetSource === undefined) throw new NotFoundError('this service does not read fleets (no fleet source is configured)');
    return fleetSource;
  };
  // Only the default repository and ALLOWED_REPOSITORY_URLS: these make the service clone.
  const target = context.readableRepository;

  app.get(
    BASE,
    {
      schema: {
        summary: 'The fleet: every cluster under clusters/ with its provenance, attributes, last run and whether it is behind the reference',
        description:
          'Read from the branch head. `status` is `behind` when the cluster was rendered from an older platform commit than the current one (`behind.rendered_from`); `upgrade` re-renders it. `?format=resourceset` answers in the Flux Operator ResourceSetInputProvider `ExternalService` shape.',
        tags: ['fleet'],
        querystring: clustersQuerySchema,
        response: { 200: fleetSchema, ...errorResponsesOf(400, 404) },
      },
    },
    async (request, reply) => {
      const repository = await target(request.query);
      const fleet = await source().fleet({ ...repository, signal: signalOf(reply) });
      const runs = await lastRuns(service, repository.repositoryUrl, repository.branch);
      const views = fleet.clusters.map((c) => {
        const run = runs.get(c.name);
        return clusterView<LastRunView>(c, fleet.platformCommit, run === undefined ? undefined : lastRunView(run), run);
      });
      void reply.header('cache-control', 'private, no-cache');
      if (request.query.format === 'resourceset') return resourceSetInputs(views);
      return {
        repository: { url: withoutCredentials(repository.repositoryUrl), branch: repository.branch },
        commit: fleet.commit,
        platform_commit: fleet.platformCommit ?? null,
        clusters: views,
      };
    },
  );

  /** One cluster's view with its `sealing` section, compared with `certificate` when there is one. */
  const detail = async (name: string, query: { repository_url?: string; branch?: string }, signal: AbortSignal, compare: SealingComparison) => {
    const repository = await target(query);
    const fleet = await source().fleet({ ...repository, signal });
    const entry = fleet.clusters.find((c) => c.name === name);
    if (entry === undefined) throw new NotFoundError(`clusters/${name} does not exist on branch ${repository.branch}`);
    const [runs, sealedSecrets] = await Promise.all([
      lastRuns(service, repository.repositoryUrl, repository.branch, entry.name),
      source().sealedSecrets({ ...repository, cluster: entry.name, commit: fleet.commit, signal }),
    ]);
    const run = runs.get(entry.name);
    const comparison = await compare();
    return {
      ...clusterView<LastRunView>(entry, fleet.platformCommit, run === undefined ? undefined : lastRunView(run), run),
      sealing: sealingView(sealedSecrets, comparison.certificate, comparison.reason),
    };
  };

  app.get(
    `${BASE}/:name`,
    {
      schema: {
        summary: 'One cluster of the fleet, with its SealedSecrets',
        description:
          "`sealing` names the SealedSecrets that record no certificate; the controller is not asked here (`controller_certificate` is null): POST …/sealing-check with the cluster's kubeconfig or certificate names the ones sealed with an older certificate.",
        tags: ['fleet'],
        params: clusterParamsSchema,
        querystring: clusterQuerySchema,
        response: { 200: clusterViewSchema, ...errorResponsesOf(400, 404) },
      },
    },
    async (request, reply) => {
      const view = await detail(request.params.name, request.query, signalOf(reply), async () => ({ reason: NOT_ASKED }));
      void reply.header('cache-control', 'private, no-cache');
      return view;
    },
  );

  registerSealingCheckRoute(context, detail, certificates);

  app.delete(
    `${BASE}/:name`,
    {
      schema: {
        summary: 'Decommission a cluster: a run removing the files the generator wrote under clusters/NAME/',
        description:
          "`confirm` must repeat the name. With `?dry_run=true` (no `confirm` needed): 200 with the files a removal would delete and keep, as the branch holds them now; nothing starts, and the refusals for the reference environment (400), a missing cluster (404) and a directory the generator did not write (409) are the same. Otherwise starts a run (action `remove`: a runner Job, listed under /api/v1/scaffolds with its steps and log) that removes, in one commit, only the files the cluster's provenance lists; a flux-system/ written by flux bootstrap (and any other file) is kept and reported. 202 with the run and what it removes and keeps as the branch holds them now (`Location` is the run). Refused for the reference environment (400), a directory the generator did not write (409) and while the cluster has an active run (409). The commit is delivered as the optional JSON body's `delivery` says: pushed (default; a protected branch fails the run with a message pointing at pull_request mode), or through a pull/merge request on `scaffold/<cluster>/remove`, opened with the service's forge credentials, that must be merged before the run succeeds.",
        tags: ['fleet'],
        params: clusterParamsSchema,
        querystring: removeClusterQuerySchema,
        // Fastify hands an absent body over as null.
        body: removeClusterBodySchema.nullish(),
        response: { 200: removalPreviewSchema, 202: removalSchema, ...errorResponsesOf(400, 404, 409, 413, 415) },
      },
    },
    async (
      request: FastifyRequest<{
        Params: { name: string };
        Querystring: { confirm?: string; dry_run?: 'true' | 'false'; repository_url?: string; branch?: string };
        Body: z.infer<typeof removeClusterBodySchema> | null | undefined;
      }>,
      reply,
    ) => {
      const { name } = request.params;
      const caller = callerOf(request);
      if (request.query.dry_run === 'true') {
        // What the confirmation lists before anyone types the name: the same plan a removal starts from, nothing started.
        const repository = await target(request.query);
        const plan = await source().planRemoval({ ...repository, cluster: name, signal: signalOf(reply) });
        return reply
          .status(200)
          .send({ dry_run: true, cluster: plan.name, removed: [...plan.remove], kept: [...plan.kept], flux_bootstrap: plan.fluxBootstrap });
      }
      if (request.query.confirm !== name)
        throw new ValidationError([{ field: 'confirm', message: `must repeat the cluster name (${name}) to confirm the removal` }]);
      const deleteData = dataRemovalOf(request.body);
      const repository = await target(request.query);
      const delivery = fleetDeliveryOf(request.body?.delivery, repository.repositoryUrl);
      service.checkFleetDelivery(delivery, repository.repositoryUrl);
      await service.refuseActiveRuns(repository, [name], 'remove');
      // The plan refuses the reference, a missing cluster and a directory without provenance before any run
      // starts, and names the cluster as recorded; the run plans again from what it clones.
      const plan = await source().planRemoval({ ...repository, cluster: name, signal: signalOf(reply) });
      const run = await service.startFleetRun(
        {
          action: 'remove',
          cluster: plan.spec,
          ...repository,
          ...(delivery !== undefined ? { delivery } : {}),
          ...(deleteData !== undefined ? { deleteData } : {}),
        },
        caller,
      );
      context.runsCreated.inc({ kind: 'remove' });
      return reply
        .status(202)
        .header('location', `${API}/${run.id}`)
        .send({
          run: acceptedView(run),
          cluster: plan.name,
          removed: [...plan.remove],
          kept: [...plan.kept],
          flux_bootstrap: plan.fluxBootstrap,
          delete_data: deleteData !== undefined,
          delivery: deliveryView(delivery),
        });
    },
  );
}
