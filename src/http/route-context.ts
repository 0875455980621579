/**
 * What every route group is registered with: the app (typed by its zod
 * schemas), the use cases, the caller of a request, and a signal that ends
 * long responses when the app closes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Counter } from 'prom-client';
import type { Logger } from '../logger.js';
import type { ReadableRepository } from './readable-repository.js';
import type { Caller } from '../service/authenticator.js';
import type { CatalogSource } from '../service/catalog-source.js';
import type { ClusterGraphSource } from '../service/cluster-graph-source.js';
import type { RunStore } from '../service/run-store.js';
import type { RunService } from '../service/run-service.js';

/** The Fastify app with zod-typed routes. */
export type ZodApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

/** Shared by the route groups in `routes/`. */
export interface RouteContext {
  readonly app: ZodApp;
  readonly service: RunService;
  readonly store: Pick<RunStore, 'ping'>;
  readonly logger: Logger;
  readonly graphSource?: ClusterGraphSource;
  readonly catalogSource?: CatalogSource;
  readonly metricsPublic: boolean;
  /** The repository a fleet or catalog read names: the default one or an allowed one (`readable-repository.ts`). */
  readonly readableRepository: ReadableRepository;
  /** Runs created, by kind (create or retry). */
  readonly runsCreated: Counter<'kind'>;
  /** The authenticated caller; throws AuthenticationError for a request that has none. */
  callerOf(request: FastifyRequest): Caller;
  /** Aborted when the app closes or the client goes away. */
  signalOf(reply: FastifyReply): AbortSignal;
}

/** The base path of the scaffold API. */
export const API = '/api/v1/scaffolds';
