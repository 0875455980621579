/** A repository's layer catalog, for the dashboard's dry-run form. */
import { NotFoundError } from '../../errors.js';
import type { RouteContext } from '../route-context.js';
import { catalogQuerySchema, catalogSchema, errorResponsesOf } from '../wire-schemas.js';

/** Registers `GET /api/v1/catalog`. */
export function registerCatalogRoutes(context: RouteContext): void {
  const { app, catalogSource, readableRepository, signalOf } = context;

  app.get(
    '/api/v1/catalog',
    {
      schema: {
        summary: "A repository's layer catalog: the cluster attributes it knows, their values and defaults",
        description:
          "Read from the branch's scaffold.yaml (`attributes`). Both parameters are optional: the service's default repository and `main`. `attributes` is empty for a platform without a layer catalog. 404 when this service cannot read catalogs.",
        tags: ['catalog'],
        querystring: catalogQuerySchema,
        response: { 200: catalogSchema, ...errorResponsesOf(400, 404) },
      },
    },
    async (request, reply) => {
      if (catalogSource === undefined) throw new NotFoundError('this service does not read layer catalogs (no catalog source is configured)');
      const repository = await readableRepository(request.query);
      const catalog = await catalogSource.catalog({ ...repository, signal: signalOf(reply) });
      void reply.header('cache-control', 'private, no-cache');
      return {
        attributes: catalog.attributes.map((a) => ({ name: a.name, values: [...a.values], ...(a.default === undefined ? {} : { default: a.default }) })),
      };
    },
  );
}
