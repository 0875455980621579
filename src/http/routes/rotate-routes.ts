/**
 * Credential rotation as a run: `POST /api/v1/clusters/{name}/rotate` starts a
 * scaffold run of an existing cluster (its latest run's spec, repository and
 * branch) that seals fresh values for the chosen credentials with the
 * certificate the cluster's controller serves now. Being a run, it is listed,
 * logged, cancelled and retried like any other; like a rerun it converges,
 * so apart from the rotated SealedSecrets it commits only what the current
 * reference changes.
 */
import { ConflictError, NotFoundError } from '../../errors.js';
import { API, type RouteContext } from '../route-context.js';
import { acceptedSchema, clusterParamsSchema, errorResponsesOf, rotateRequestSchema } from '../wire-schemas.js';
import { acceptedView, secretsOf } from '../wire-views.js';

/** Registers `POST /api/v1/clusters/{name}/rotate`. */
export function registerRotateRoutes(context: RouteContext): void {
  const { app, service, runsCreated, callerOf } = context;

  app.post(
    '/api/v1/clusters/:name/rotate',
    {
      schema: {
        summary: "Rotate a cluster's sealed credentials as a run",
        description:
          "Starts a run for a cluster the service scaffolded before (404 otherwise): it renders the cluster again from its latest run's spec and seals fresh values for `credentials` (default: all) with the cluster's current certificate, commits and pushes. With `fresh_values`, it also writes the Jobs that set the new values where the databases keep them, and its result names the workloads to restart. 202 with the run; follow it under /api/v1/scaffolds/{id}. A cluster is its name in one branch of one repository: `repository` picks which (default: where its latest run was). 409 while that cluster has an active run, and when its latest run there removed it.",
        tags: ['clusters'],
        params: clusterParamsSchema,
        body: rotateRequestSchema,
        response: { 202: acceptedSchema, ...errorResponsesOf(400, 404, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { name } = request.params;
      const repository = request.body.repository;
      // A cluster is its name in one branch of one repository: the latest run is looked up there
      // (as far as the caller named it), so a removal on another branch says nothing about this one.
      const scope = { ...(repository?.url === undefined ? {} : { repositoryUrl: repository.url }), ...(repository?.branch === undefined ? {} : { branch: repository.branch }) };
      const latest = (await service.list({ cluster: name, ...scope, limit: 1 })).runs[0];
      const where = repository === undefined ? '' : ` on ${repository.branch === undefined ? 'that repository' : `branch ${repository.branch}`}`;
      if (latest === undefined) throw new NotFoundError(`no run has scaffolded cluster ${name}${where}: scaffold it first`);
      // Rotating renders the whole cluster again: after a removal that would bring it back.
      if (latest.action === 'remove') {
        throw new ConflictError(`cluster ${name} was removed by run ${latest.id} (${latest.status}) on branch ${latest.branch}: scaffold it again before rotating its credentials${repository === undefined ? ', or name the repository and branch to rotate' : ''}`);
      }
      const run = await service.create(
        {
          cluster: latest.cluster,
          repository: { url: repository?.url ?? latest.repositoryUrl, branch: repository?.branch ?? latest.branch },
          secrets: { ...secretsOf(request.body), rotateCredentials: request.body.credentials ?? true, ...(request.body.fresh_values === true ? { freshValues: true } : {}) },
        },
        caller,
      );
      runsCreated.inc({ kind: 'rotate' });
      return reply.status(202).header('location', `${API}/${run.id}`).send(acceptedView(run));
    },
  );
}
