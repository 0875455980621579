/** Health, metrics and the OpenAPI document: what operators and their tools poll. */
import type { Registry } from 'prom-client';
import type { RouteContext } from '../route-context.js';
import { describeError } from '../http-errors.js';
import { z } from 'zod';
import { errorResponsesOf, healthSchema } from '../wire-schemas.js';

/** How long a successful store ping answers /healthz without another. */
const HEALTHY_FOR_MS = 1000;

/** Registers /healthz, /metrics and /openapi.json. */
export function registerOperationsRoutes(context: RouteContext, registry: Registry): void {
  const { app, store, logger, metricsPublic } = context;

  // Concurrent probes share one round trip, and a success is trusted for a
  // second: under load /healthz must not queue pings in front of real work.
  let pinging: Promise<void> | undefined;
  let healthyUntil = 0;
  const ping = async (): Promise<void> => {
    if (Date.now() < healthyUntil) return;
    pinging ??= store
      .ping()
      .then(() => {
        healthyUntil = Date.now() + HEALTHY_FOR_MS;
      })
      .finally(() => {
        pinging = undefined;
      });
    await pinging;
  };

  app.get(
    '/healthz',
    { schema: { summary: 'Health: the run store answers', tags: ['operations'], security: [], response: { 200: healthSchema, 503: healthSchema } } },
    async (_request, reply) => {
      try {
        await ping();
        return { status: 'ok' as const };
      } catch (error) {
        logger.warn({ err: describeError(error) }, 'health check failed: the run store does not answer');
        return reply.status(503).send({ status: 'unavailable' as const });
      }
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        tags: ['operations'],
        ...(metricsPublic ? { security: [] } : {}),
        response: {
          200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: z.string() } } },
          // Without METRICS_PUBLIC it takes a token like the API, with the same refusals.
          ...(metricsPublic ? {} : errorResponsesOf()),
        },
      },
    },
    async (_request, reply) => {
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    },
  );

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
