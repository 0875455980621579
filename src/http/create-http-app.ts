/**
 * The HTTP edge of `gitops-scaffolder serve`, put together: Fastify with zod
 * validation and the OpenAPI document, the bearer-token hook, request metrics
 * and logs, the error handler, and the route groups (`routes/`). Schemas are in
 * `wire-schemas.ts`, errors become statuses in `http-errors.ts`, and the use
 * cases live in `service/run-service.ts`.
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger as Pino } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AppError, AuthenticationError, UnavailableError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import { REDACT_PATHS } from '../pino-logger.js';
import type { Authenticator, Caller } from '../service/authenticator.js';
import type { Authorizer } from '../service/authorizer.js';
import { AllowAllAuthorizer } from '../service/static-authorizer.js';
import type { CatalogSource } from '../service/catalog-source.js';
import type { ClusterGraphSource } from '../service/cluster-graph-source.js';
import type { FleetSource } from '../service/fleet-source.js';
import type { ControllerCertificateSource } from '../service/controller-certificate-source.js';
import type { RunStore } from '../service/run-store.js';
import type { RunService } from '../service/run-service.js';
import { describeError, errorResponseOf, zodValidatorCompiler } from './http-errors.js';
import { readableRepository } from './readable-repository.js';
import type { RouteContext, ZodApp } from './route-context.js';
import { registerCatalogRoutes } from './routes/catalog-routes.js';
import { registerClusterRoutes } from './routes/cluster-routes.js';
import { registerOperationsRoutes } from './routes/operations-routes.js';
import { registerRunOutputRoutes } from './routes/run-output-routes.js';
import { registerScaffoldRoutes } from './routes/scaffold-routes.js';
import { registerRotateRoutes } from './routes/rotate-routes.js';
import { registerUpgradeRoutes } from './routes/upgrade-routes.js';
import type { RolloutStore } from '../service/rollout-store.js';
import { actionOf, assertRouteHasPermission, permissionOf } from './route-permissions.js';
import { isUiPath, registerUiRoutes, type UiRoutesOptions } from './ui-routes.js';
import { packageVersion } from '../package-paths.js';

/** Content-Security-Policy of every /docs response: nothing but its own files, never inside a frame. */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** What the HTTP app needs. */
export interface HttpAppDeps {
  readonly service: RunService;
  readonly authenticator: Authenticator;
  /**
   * Decides what an authenticated caller may do, per route (`route-permissions.ts`).
   * @default AllowAllAuthorizer: every authenticated caller may do everything (embedded mode)
   */
  readonly authorizer?: Authorizer;
  /** Only `ping` is used, by /healthz. */
  readonly store: Pick<RunStore, 'ping'>;
  /** Runner output lines and progress updates the run monitor holds because the store could not take them (a gauge). */
  readonly pendingRunWrites?: () => number;
  /**
   * A pino instance (also handed to Fastify, with Authorization headers and
   * bodies redacted) or any Logger. Request log lines carry method, route,
   * status, duration and caller identity only: never headers, never bodies.
   * @default silentLogger
   */
  readonly logger?: Logger | Pino;
  /** Serve /metrics without a bearer token. @default false */
  readonly metricsPublic?: boolean;
  /** Largest accepted request body in bytes; larger gets 413. @default 65536 */
  readonly bodyLimit?: number;
  /**
   * Longest a client may take to send a whole request (headers and body). Past it
   * Node answers 408 and closes the connection: a client that sends headers and
   * then trickles or stalls its body cannot hold a connection open. Responses are
   * not bounded by it (a followed log stream may last as long as its run).
   * @default 30000
   */
  readonly requestTimeoutMs?: number;
  /**
   * Draws a run's Flux graph for `GET /api/v1/scaffolds/{id}/graph`.
   * @default none: the endpoint answers 404 saying the graph is not available
   */
  readonly graphSource?: ClusterGraphSource;
  /**
   * Reads a repository's layer catalog for `GET /api/v1/catalog` (the dry-run form's choices).
   * @default none: the endpoint answers 404 saying the catalog is not available
   */
  readonly catalogSource?: CatalogSource;
  /**
   * Reads a repository's fleet and removes clusters (`/api/v1/clusters`).
   * @default none: those endpoints answer 404 saying the fleet is not available
   */
  readonly fleetSource?: FleetSource;
  /**
   * Records upgrade rollouts (`/api/v1/upgrades`, with `fleetSource`).
   * @default none: those endpoints answer 404 saying upgrades are not available
   */
  readonly rolloutStore?: RolloutStore;
  /**
   * Reads a cluster's Sealed Secrets certificate with a caller's kubeconfig (`POST /api/v1/clusters/{name}/sealing-check`).
   * @default none: that check then compares only with a certificate the caller sends
   */
  readonly controllerCertificates?: ControllerCertificateSource;
  /**
   * `ALLOWED_REPOSITORY_URLS`: with the default repository, the only ones the
   * catalog, fleet, upgrade and removal endpoints read (`readable-repository.ts`).
   * @default none: only the default repository
   */
  readonly allowedRepositoryUrls?: readonly string[];
  /** Where the built dashboard is (served under /ui/). @default the package's ui/dist */
  readonly ui?: UiRoutesOptions;
}

/**
 * Builds the Fastify app (not listening; call `listen` or `inject`).
 *
 * Authentication runs in the `onRequest` hook, before the body is read, so an
 * unauthenticated caller cannot make the service parse anything.
 */
export async function createHttpApp(deps: HttpAppDeps): Promise<FastifyInstance> {
  const { service, authenticator, store } = deps;
  const authorizer = deps.authorizer ?? new AllowAllAuthorizer();
  const metricsPublic = deps.metricsPublic ?? false;
  const bodyLimit = deps.bodyLimit ?? 65_536;
  const requestTimeout = deps.requestTimeoutMs ?? 30_000;
  const pinoInstance = isPino(deps.logger) ? deps.logger : undefined;
  const logger: Logger = deps.logger ?? silentLogger;
  const callers = new WeakMap<FastifyRequest, Caller>();
  // Aborted on close, so followed log streams end and the server can stop.
  const closing = new AbortController();

  const app = Fastify({
    bodyLimit,
    // Fastify's default 0 turns Node's request timeout off. Not `connectionTimeout`
    // (an idle-socket timeout), which would cut a quiet followed log stream.
    requestTimeout,
    http: {
      // Headers are part of the request: no longer than the whole of it (Node's own default is 60 s).
      headersTimeout: Math.min(requestTimeout, 60_000),
      // Node looks for expired requests only this often (30 s by default), which
      // would let a stalled request live up to twice its timeout.
      connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(requestTimeout / 10))),
    },
    // We log each request ourselves (onResponse) with a fixed set of fields.
    logController: new LogController({ disableRequestLogging: true }),
    ...(pinoInstance === undefined
      ? {}
      : {
          loggerInstance: pinoInstance.child(
            { component: 'http' },
            // A child's redact list replaces its parent's: keep the service's own (REDACT_PATHS) too.
            {
              redact: {
                paths: [...new Set([...REDACT_PATHS, 'req.headers.authorization', 'req.headers.cookie', 'req.body', 'body', 'headers.authorization'])],
                censor: '[redacted]',
              },
            },
          ),
        }),
    return503OnClosing: true,
    forceCloseConnections: true,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Only JSON bodies: a text/plain parser would let a form or a mistyped client through to validation.
  app.removeContentTypeParser('text/plain');
  // Fastify's own JSON parser (prototype-poisoning checks included), except that
  // an empty body is "no body": clients often send `Content-Type: application/json`
  // on a bodiless POST such as cancel. Where a body is required, validation says so.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });

  // --- metrics: a registry per app, so two apps in one process never share counters
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gitops_scaffolder_' });
  const requests = new Counter({
    name: 'gitops_scaffolder_http_requests_total',
    help: 'HTTP requests by method, route and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'gitops_scaffolder_http_request_duration_seconds',
    help: 'HTTP request durations by method and route (followed log streams included).',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
    registers: [registry],
  });
  const pendingRunWrites = deps.pendingRunWrites;
  if (pendingRunWrites !== undefined) {
    new Gauge({
      name: 'gitops_scaffolder_run_progress_pending',
      help: 'Runner output lines and progress updates read but not stored yet (the database is failing); stored in order once it answers.',
      registers: [registry],
      collect() {
        this.set(pendingRunWrites());
      },
    });
  }
  const runsCreated = new Counter({
    name: 'gitops_scaffolder_runs_created_total',
    help: 'Scaffold runs created, by kind (create or retry).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });

  // Set before any plugin is registered: a plugin's routes keep the error handler
  // in force when it was registered (Swagger UI's /docs would answer in Fastify's format).
  app.setErrorHandler((error, request, reply) => {
    const { status, body } = errorResponseOf(error, bodyLimit);
    if (status >= 500 && status !== 503) {
      logger.error({ reqId: request.id, route: request.routeOptions.url, err: describeError(error) }, 'request failed');
    } else if (status === 503) {
      logger.warn({ reqId: request.id, route: request.routeOptions.url, err: describeError(error) }, 'dependency unavailable');
    }
    if (status === 401) void reply.header('www-authenticate', 'Bearer');
    if (status === 503) void reply.header('retry-after', '5');
    return reply.status(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send(body);
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'gitops-scaffolder',
        // The package's version: a client generated from the document can tell which service it describes.
        version: packageVersion(),
        description:
          "Writes a new cluster's complete Flux tree into a Git repository and pushes it. POST a request, then poll GET /api/v1/scaffolds/{id} (or follow its logs) until the status is final.",
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A Kubernetes token (TokenReview; RBAC authorizes each action with a SubjectAccessReview) or a configured API token.',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    // Swagger UI loads only its own files (no inline script; React sets inline styles) and the document from /docs/json.
    staticCSP: DOCS_CSP,
  });
  // Its static files are served by a scope its route hooks do not reach: set the rest of the headers here, for all of /docs.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url === '/docs' || request.url.startsWith('/docs/')) {
      void reply.header('x-frame-options', 'DENY').header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    }
    return payload;
  });

  // --- hooks
  // Fail closed: an API route nobody mapped to a permission stops the app from starting.
  app.addHook('onRoute', assertRouteHasPermission);
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url;
    if (route === '/healthz' || (metricsPublic && route === '/metrics')) return;
    // The API's description holds no data, and a browser cannot send a token to load /docs. Judged by
    // the route the router chose, not the URL's text, so no URL reaches another handler through these.
    const read = request.method === 'GET' || request.method === 'HEAD';
    if (read && (route === '/openapi.json' || route === '/docs' || route?.startsWith('/docs/') === true)) return;
    // The dashboard's static assets hold no data; everything it shows comes from the API below, with a token.
    if (read && route !== undefined && isUiPath(route)) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
    if (match === null) {
      throw new AuthenticationError(
        header === undefined ? 'a bearer token is required (Authorization: Bearer <token>)' : 'the Authorization header must be "Bearer <token>"',
      );
    }
    let caller: Caller;
    try {
      caller = await authenticator.authenticate(match[1] as string);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new UnavailableError('callers cannot be authenticated right now', { cause: error });
    }
    callers.set(request, caller);
    // Unmatched URLs have no permission: they answer 404 to an authenticated caller.
    const permission = route === undefined ? undefined : permissionOf(request.method, route);
    if (permission === undefined) return;
    try {
      await authorizer.authorize(caller, actionOf(permission, request));
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new UnavailableError('permissions cannot be checked right now', { cause: error });
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    durations.observe({ method: request.method, route }, seconds);
    const quiet = route === '/healthz' || route === '/metrics';
    const fields = {
      reqId: request.id,
      method: request.method,
      route,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
      caller: callers.get(request)?.identity,
    };
    if (quiet) logger.debug(fields, 'request completed');
    else logger.info(fields, 'request completed');
  });

  app.addHook('preClose', async () => {
    closing.abort();
  });

  app.setNotFoundHandler((request, reply) => {
    return reply
      .status(404)
      .type('application/json; charset=utf-8')
      .send({ error: { code: 'not_found', message: `no endpoint ${request.method} ${request.url.split('?')[0] ?? ''}` } });
  });

  // --- routes
  const context: RouteContext = {
    // The logger type parameter is pino's; routes only need the zod provider.
    app: app as unknown as ZodApp,
    service,
    store,
    logger,
    metricsPublic,
    runsCreated,
    readableRepository: readableRepository(service, deps.allowedRepositoryUrls ?? []),
    ...(deps.graphSource === undefined ? {} : { graphSource: deps.graphSource }),
    ...(deps.catalogSource === undefined ? {} : { catalogSource: deps.catalogSource }),
    callerOf: (request) => {
      const caller = callers.get(request);
      if (caller === undefined) throw new AuthenticationError('a bearer token is required (Authorization: Bearer <token>)');
      return caller;
    },
    signalOf: (reply) => AbortSignal.any([closing.signal, abortOnClose(reply)]),
  };
  registerScaffoldRoutes(context);
  registerRunOutputRoutes(context);
  registerCatalogRoutes(context);
  registerClusterRoutes(context, deps.fleetSource, deps.controllerCertificates);
  registerRotateRoutes(context);
  registerUpgradeRoutes(context, deps.fleetSource, deps.rolloutStore);
  registerOperationsRoutes(context, registry);
  await registerUiRoutes(app as unknown as FastifyInstance, deps.ui ?? {});

  await app.ready();
  return app as unknown as FastifyInstance;
}

/** A signal aborted when the client goes away (the response closes before it ends). */
function abortOnClose(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => controller.abort());
  return controller.signal;
}

function isPino(logger: Logger | Pino | undefined): logger is Pino {
  return logger !== undefined && typeof (logger as Partial<Pino>).levels === 'object' && typeof (logger as Partial<Pino>).fatal === 'function';
}
