/**
 * Credential rotation as a run: `POST /api/v1/clusters/{name}/rotate` starts a
 * scaffold run of an existing cluster (its latest run's spec, repository and
 * branch) in which the cluster's own Sealed Secrets controller re-encrypts the
 * chosen SealedSecrets with its newest key, values unchanged (`/v1/rotate`,
 * runner/reencrypt-through-controller.ts): a database that set its password at
 * first start keeps accepting it. Being a run, it is listed,
 * logged, cancelled and retried like any other; like a rerun it converges,
 * so apart from the rotated SealedSecrets it commits only what the current
 * reference changes.
 */
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
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
          "Starts a run for a cluster the service scaffolded before (404 otherwise). By default the cluster's Sealed Secrets controller re-encrypts `credentials` (default: every one not sealed with the certificate it serves now) with its newest key, the values unchanged, then the run renders the cluster again from its latest run's spec, commits and pushes; this needs `kubeconfig` and takes no `sealing` (400): the runner reaches the controller through the API server's service proxy and never sees a value. With `fresh_values: true` the run seals fresh values for `credentials` (default: all) with the cluster's current certificate (`kubeconfig` or `sealing.certificate`) and writes the Jobs that set the new values where the databases keep them; its result names the workloads to restart. 202 with the run; follow it under /api/v1/scaffolds/{id}. A cluster is its name in one branch of one repository: `repository` picks which (default: where its latest run was). 409 while that cluster has an active run, and when its latest run there removed it.",
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
      const fresh = request.body.fresh_values === true;
      // Same values are re-encrypted by the cluster's controller: a certificate cannot reach it, and the files
      // must record the certificate that controller serves (the runner reads it), not one supplied.
      if (!fresh && (request.body.kubeconfig === undefined || request.body.sealing !== undefined)) {
        throw new ValidationError([
          {
            field: request.body.kubeconfig === undefined ? 'kubeconfig' : 'sealing',
            message:
              request.body.kubeconfig === undefined
                ? "is required: the cluster's Sealed Secrets controller re-encrypts the same values with its newest key (/v1/rotate), reached through the API server"
                : 'is not taken by a rotation: the certificate is read from the controller that re-encrypts (send kubeconfig only)',
          },
        ]);
      }
      // A cluster is its name in one branch of one repository: the latest run is looked up there
      // (as far as the caller named it), so a removal on another branch says nothing about this one.
      const scope = {
        ...(repository?.url === undefined ? {} : { repositoryUrl: repository.url }),
        ...(repository?.branch === undefined ? {} : { branch: repository.branch }),
      };
      const latest = (await service.list({ cluster: name, ...scope, limit: 1 })).runs[0];
      const where = repository === undefined ? '' : ` on ${repository.branch === undefined ? 'that repository' : `branch ${repository.branch}`}`;
      if (latest === undefined) throw new NotFoundError(`no run has scaffolded cluster ${name}${where}: scaffold it first`);
      // Rotating renders the whole cluster again: after a removal that would bring it back.
      if (latest.action === 'remove') {
        throw new ConflictError(
          `cluster ${name} was removed by run ${latest.id} (${latest.status}) on branch ${latest.branch}: scaffold it again before rotating its credentials${repository === undefined ? ', or name the repository and branch to rotate' : ''}`,
        );
      }
      const run = await service.create(
        {
          cluster: latest.cluster,
          repository: { url: repository?.url ?? latest.repositoryUrl, branch: repository?.branch ?? latest.branch },
          secrets: {
            ...secretsOf(request.body),
            rotateCredentials: request.body.credentials ?? true,
            ...(fresh ? { rotateValues: 'fresh' as const, freshValues: true as const } : { rotateValues: 'same' as const }),
          },
        },
        caller,
      );
      runsCreated.inc({ kind: 'rotate' });
      return reply.status(202).header('location', `${API}/${run.id}`).send(acceptedView(run));
    },
  );
}
