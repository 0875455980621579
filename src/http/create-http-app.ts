/**
 * The HTTP edge of `gitops-scaffolder serve`: routes, request schemas (zod, also
 * the OpenAPI document), the bearer-token hook, metrics and the one place where
 * errors become HTTP statuses. Routes only translate; the use cases live in
 * `service/scaffold-service.ts`.
 */
import { Readable } from 'node:stream';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifySchemaCompiler } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger as Pino } from 'pino';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { z } from 'zod';
import { AppError, AuthenticationError, NotFoundError, UnavailableError, ValidationError, type FieldIssue } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import { REDACT_PATHS } from '../pino-logger.js';
import { clusterNameSchema, clusterSpecSchema, fieldIssuesOf } from '../model/cluster-spec.js';
import type { Authenticator, Caller } from '../service/authenticator.js';
import type { CatalogSource } from '../service/catalog-source.js';
import type { ClusterGraphSource } from '../service/cluster-graph-source.js';
import type { RunStep } from '../service/run-steps.js';
import type { LogLine, RunStore } from '../service/run-store.js';
import { branchSchema, type DryRunResult, type ScaffoldRequest, type ScaffoldService } from '../service/scaffold-service.js';
import { isFinal, type RunSecrets, type ScaffoldRun } from '../service/scaffold-run.js';
import { isUiPath, registerUiRoutes, type UiRoutesOptions } from './ui-routes.js';

/** What the HTTP app needs. */
export interface HttpAppDeps {
  readonly service: ScaffoldService;
  readonly authenticator: Authenticator;
  /** Only `ping` is used, by /healthz. */
  readonly store: Pick<RunStore, 'ping'>;
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
   * Draws a run's Flux graph for `GET /api/v1/scaffolds/{id}/graph`.
   * @default none: the endpoint answers 404 saying the graph is not available
   */
  readonly graphSource?: ClusterGraphSource;
  /**
   * Reads a repository's layer catalog for `GET /api/v1/catalog` (the dry-run form's choices).
   * @default none: the endpoint answers 404 saying the catalog is not available
   */
  readonly catalogSource?: CatalogSource;
  /** Where the built dashboard is (served under /ui/). @default the package's ui/dist */
  readonly ui?: UiRoutesOptions;
}

const API = '/api/v1/scaffolds';
/** How long a successful store ping answers /healthz without another. */
const HEALTHY_FOR_MS = 1000;
const RUN_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const;
const STEP_STATUSES = ['pending', 'running', 'succeeded', 'skipped', 'failed'] as const;
/** Final runs never change again: their step timelines are kept (at most this many) instead of re-read from the log. */
const FINAL_STEPS_CACHE = 1000;

// ---------------------------------------------------------------------------
// Wire schemas: the request shape of DESIGN.md "A request, in full". Objects are
// strict so a misspelt field is an error rather than silently ignored.

const dnsLabel = clusterNameSchema;
const dnsSubdomain = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and "."');
// Printable text without line breaks: a token or user name with a newline in it
// would be a header-injection vector once it reaches git's credential helper.
const singleLine = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    .regex(/^[^\x00-\x1f\x7f]*$/, 'must not contain control characters or line breaks');

const credentialsSchema = z
  .object({ username: singleLine(256).optional(), token: singleLine(8192) })
  .strict()
  .describe('Used for this run only: passed to the runner, never stored or logged.');

// Shape only: what a URL may reach is the service's configured policy (git/repository-url.ts), checked once there.
const repositoryUrlSchema = z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(2048, 'must be at most 2048 characters');

const secretRefSchema = z
  .object({
    namespace: dnsLabel,
    name: dnsSubdomain,
    key: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(253, 'must be at most 253 characters')
      .regex(/^[-._a-zA-Z0-9]+$/, 'must be a Secret data key: letters, digits, "-", "_" and "."'),
  })
  .strict();

const kubeconfigSchema = z
  .object({
    secretRef: secretRefSchema.optional(),
    inline: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(1_048_576, 'must be at most 1 MiB').optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if ((value.secretRef === undefined) === (value.inline === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of kubeconfig.secretRef or kubeconfig.inline' });
    }
  })
  .describe("Access to the new cluster, to wait for its Sealed Secrets controller and fetch its certificate. A Secret in the service's cluster (secretRef, Kubernetes executor only) or the kubeconfig text (inline).");

const sealingSchema = z
  .object({ certificate: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(65_536, 'must be at most 64 KiB') })
  .strict()
  .describe("The new cluster's Sealed Secrets certificate (PEM), like `kubeseal --cert`: steps 4–5 are then skipped.");

const registryPullSecretSchema = z
  .object({
    dockerconfigjson: z
      .string({ error: 'must be a string' })
      .min(2, 'must not be empty')
      .max(65_536, 'must be at most 64 KiB')
      .describe('A .dockerconfigjson: an "auths" object with at least one registry and its credentials.'),
  })
  .strict()
  .describe('Your own registry pull secret instead of a generated one.');

const scaffoldRequestSchema = z
  .object({
    cluster: clusterSpecSchema,
    repository: z
      .object({
        url: repositoryUrlSchema
          .optional()
          .describe('https://, ssh:// or file:// (http:// and git:// to loopback only); no credentials in the URL. Default: the service\'s default repository.'),
        branch: branchSchema.optional().describe('Default: main.'),
        credentials: credentialsSchema.optional(),
      })
      .strict()
      .optional(),
    kubeconfig: kubeconfigSchema.optional(),
    sealing: sealingSchema.optional(),
    registry_pull_secret: registryPullSecretSchema.optional(),
  })
  .strict()
  .describe('Only cluster is required by the shape; one of kubeconfig or sealing.certificate must be given.');

const retryRequestSchema = z
  .object({
    repository: z.object({ credentials: credentialsSchema.optional() }).strict().optional(),
    kubeconfig: kubeconfigSchema.optional(),
    sealing: sealingSchema.optional(),
    registry_pull_secret: registryPullSecretSchema.optional(),
  })
  .strict()
  .describe('The secrets of the retried run, sent again: the service never stores them.');

const trueFalse = z.enum(['true', 'false'], { error: 'must be true or false' });
const createQuerySchema = z.object({ dry_run: trueFalse.optional() }).strict();
const listQuerySchema = z
  .object({
    cluster: clusterNameSchema.optional(),
    status: z.enum(RUN_STATUSES, { error: `must be one of ${RUN_STATUSES.join(', ')}` }).optional(),
    limit: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(100, 'must be at most 100').optional(),
    cursor: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters').optional(),
  })
  .strict();
const logsQuerySchema = z
  .object({
    follow: trueFalse.optional(),
    format: z.enum(['text', 'json'], { error: 'must be text or json' }).optional(),
    after: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be at least 0').optional(),
  })
  .strict();
const catalogQuerySchema = z
  .object({
    repository_url: repositoryUrlSchema.optional().describe("Like a request's repository.url. Default: the service's default repository."),
    branch: branchSchema.optional().describe('Default: main.'),
  })
  .strict();
const catalogSchema = z.object({
  attributes: z
    .array(z.object({ name: z.enum(['role', 'infra_provider', 'dns_provider']), values: z.array(z.string()), default: z.string().optional() }))
    .describe("The cluster attributes the platform's layer catalog selects layers by; empty for a platform without a catalog."),
});
const graphQuerySchema = z.object({ format: z.enum(['svg', 'json'], { error: 'must be svg or json' }).optional() }).strict();
const idParamsSchema = z.object({
  // scaffold-<id> must stay a DNS-1123 label (the Job name), so ids are too.
  id: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,52}[a-z0-9])?$/, 'must be a scaffold run id'),
});

const errorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  })
  .describe('Every error has this shape.');

const runViewSchema = z.object({
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  step: z.number().int().describe('1–7 while running; 0 before the run started.'),
  step_name: z.string().nullable(),
  message: z.string(),
  cluster: z.object({ name: z.string(), domain: z.string(), region: z.string() }),
  repository: z.object({ url: z.string().describe('Without credentials.'), branch: z.string() }),
  reference: z.string(),
  job: z.string(),
  gitops_path: z.string().nullable(),
  commits: z.array(z.object({ pass: z.enum(['infrastructure', 'all']), sha: z.string() })),
  attempt: z.number().int(),
  sealing: z.enum(['certificate', 'kubeconfig']),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
const runStepSchema = z.object({
  step: z.number().int().describe('1–7.'),
  name: z.string(),
  status: z.enum(STEP_STATUSES),
  started_at: z.string().optional(),
  finished_at: z.string().optional(),
  duration_ms: z.number().int().optional(),
  message: z.string().optional().describe('Why the step was skipped or failed.'),
});
const runDetailSchema = runViewSchema.extend({
  steps: z.array(runStepSchema).describe("The seven steps, derived from the runner's log events."),
});
const acceptedSchema = z.object({ id: z.string(), job: z.string(), status: z.enum(RUN_STATUSES), attempt: z.number().int() });
const listSchema = z.object({ items: z.array(runViewSchema), next_cursor: z.string().optional() });
const dryRunSchema = z.object({
  dry_run: z.literal(true),
  cluster: z.object({ name: z.string(), domain: z.string(), region: z.string() }),
  repository: z.object({ url: z.string(), branch: z.string() }),
  reference: z.string(),
  gitops_path: z.string(),
  files: z.array(
    z.object({
      path: z.string(),
      change: z.enum(['added', 'modified', 'removed', 'unchanged']),
      content: z.string().optional(),
      previous_content: z.string().optional().describe('What the repository holds now, when the previewer reports it (modified and removed files).'),
    }),
  ),
});
const healthSchema = z.object({ status: z.enum(['ok', 'unavailable']) });

const errorResponses = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
  409: errorSchema,
  503: errorSchema,
};

const RETRY_DESCRIPTION = [
  'Retries a failed or cancelled run as a NEW run: a new id and job, the same cluster, repository, branch and reference,',
  "and `attempt` one more than the retried run's. The retried run keeps its status and logs.",
  'The service never stores secrets, so the body must carry them again (the same fields and rules as a new request:',
  'one of `kubeconfig` or `sealing.certificate`, and `repository.credentials` if the repository needs them).',
  'A run that is still active or that succeeded cannot be retried (409).',
].join(' ');

// ---------------------------------------------------------------------------

/**
 * Builds the Fastify app (not listening; call `listen` or `inject`).
 *
 * Authentication runs in the `onRequest` hook, before the body is read, so an
 * unauthenticated caller cannot make the service parse anything.
 */
export async function createHttpApp(deps: HttpAppDeps): Promise<FastifyInstance> {
  const { service, authenticator, store } = deps;
  const metricsPublic = deps.metricsPublic ?? false;
  const bodyLimit = deps.bodyLimit ?? 65_536;
  const pinoInstance = isPino(deps.logger) ? deps.logger : undefined;
  const logger: Logger = deps.logger ?? silentLogger;
  const callers = new WeakMap<FastifyRequest, Caller>();
  // Aborted on close, so followed log streams end and the server can stop.
  const closing = new AbortController();

  const app = Fastify({
    bodyLimit,
    // We log each request ourselves (onResponse) with a fixed set of fields.
    logController: new LogController({ disableRequestLogging: true }),
    ...(pinoInstance === undefined
      ? {}
      : {
          loggerInstance: pinoInstance.child(
            { component: 'http' },
            // A child's redact list replaces its parent's: keep the service's own (REDACT_PATHS) too.
            { redact: { paths: [...new Set([...REDACT_PATHS, 'req.headers.authorization', 'req.headers.cookie', 'req.body', 'body', 'headers.authorization'])], censor: '[redacted]' } },
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
      logger.error({ reqId: request.id, route: request.routeOptions.url, err: describe(error) }, 'request failed');
    } else if (status === 503) {
      logger.warn({ reqId: request.id, route: request.routeOptions.url, err: describe(error) }, 'dependency unavailable');
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
        version: '1',
        description:
          "Writes a new cluster's complete Flux tree into a Git repository and pushes it. POST a request, then poll GET /api/v1/scaffolds/{id} (or follow its logs) until the status is final.",
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A ServiceAccount token (TokenReview) or a configured API token.' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  // --- hooks
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url;
    if (route === '/healthz' || (metricsPublic && route === '/metrics')) return;
    // The API's description holds no data, and a browser cannot send a token to load /docs.
    if ((route === '/openapi.json' || request.url === '/docs' || request.url.startsWith('/docs/')) && (request.method === 'GET' || request.method === 'HEAD')) return;
    // The dashboard's static assets hold no data; everything it shows comes from the API below, with a token.
    if (isUiPath(request.url) && (request.method === 'GET' || request.method === 'HEAD')) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
    if (match === null) {
      throw new AuthenticationError(header === undefined ? 'a bearer token is required (Authorization: Bearer <token>)' : 'the Authorization header must be "Bearer <token>"');
    }
    try {
      callers.set(request, await authenticator.authenticate(match[1] as string));
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new UnavailableError('callers cannot be authenticated right now', { cause: error });
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    durations.observe({ method: request.method, route }, seconds);
    const quiet = route === '/healthz' || route === '/metrics';
    const fields = { reqId: request.id, method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime), caller: callers.get(request)?.identity };
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
  const callerOf = (request: FastifyRequest): Caller => {
    const caller = callers.get(request);
    if (caller === undefined) throw new AuthenticationError('a bearer token is required (Authorization: Bearer <token>)');
    return caller;
  };

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
        response: { 200: dryRunSchema, 202: acceptedSchema, ...errorResponses, 413: errorSchema, 415: errorSchema },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const scaffoldRequest = toScaffoldRequest(request.body);
      if (request.query.dry_run === 'true') {
        const result = await service.dryRun(scaffoldRequest, AbortSignal.any([closing.signal, abortOnClose(reply)]));
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
        response: { 200: listSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { cluster, status, limit, cursor } = request.query;
      const page = await service.list({ limit: limit ?? 50, ...(cluster ? { cluster } : {}), ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
      return { items: page.runs.map(runView), ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor }) };
    },
  );

  // Steps of final runs, which never change again; oldest first.
  const finalSteps = new Map<string, readonly RunStep[]>();
  const stepsOf = async (run: ScaffoldRun): Promise<readonly RunStep[]> => {
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
        response: { 200: runDetailSchema, ...errorResponses },
      },
    },
    async (request) => {
      const run = await service.get(request.params.id);
      return { ...runView(run), steps: (await stepsOf(run)).map(stepView) };
    },
  );

  app.get(
    `${API}/:id/graph`,
    {
      schema: {
        summary: "The Flux dependency graph of a run's cluster",
        description:
          "Drawn from the run's repository at its last commit, like `generate-gitops-env graph`: `?format=svg` (default, image/svg+xml) or `?format=json`. 404 while the run has no gitops_path, or when this service cannot draw graphs.",
        tags: ['scaffolds'],
        params: idParamsSchema,
        querystring: graphQuerySchema,
        produces: ['image/svg+xml', 'application/json'],
        response: { ...errorResponses },
      },
    },
    async (request, reply) => {
      const run = await service.get(request.params.id);
      if (deps.graphSource === undefined) throw new NotFoundError('this service does not draw cluster graphs (no graph source is configured)');
      const format = request.query.format ?? 'svg';
      const drawing = await deps.graphSource.graph(run, format);
      void reply.header('cache-control', 'private, no-cache').header('x-content-type-options', 'nosniff');
      // An SVG opened on its own must not run anything: it is a picture.
      if (format === 'svg') void reply.type('image/svg+xml; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
      else void reply.type('application/json; charset=utf-8');
      // Already text: bypass the (error-only) response schemas.
      return reply.serializer((payload: unknown) => String(payload)).send(drawing as never);
    },
  );

  app.get(
    '/api/v1/catalog',
    {
      schema: {
        summary: "A repository's layer catalog: the cluster attributes it knows, their values and defaults",
        description:
          "Read from the branch's scaffold.yaml (`attributes`). Both parameters are optional: the service's default repository and `main`. `attributes` is empty for a platform without a layer catalog. 404 when this service cannot read catalogs.",
        tags: ['catalog'],
        querystring: catalogQuerySchema,
        response: { 200: catalogSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      if (deps.catalogSource === undefined) throw new NotFoundError('this service does not read layer catalogs (no catalog source is configured)');
      const { repository_url: url, branch } = request.query;
      const repository = await service.repositoryOf({ ...(url === undefined ? {} : { url }), ...(branch === undefined ? {} : { branch }) });
      const catalog = await deps.catalogSource.catalog({ ...repository, signal: AbortSignal.any([closing.signal, abortOnClose(reply)]) });
      void reply.header('cache-control', 'private, no-cache');
      return { attributes: catalog.attributes.map((a) => ({ name: a.name, values: [...a.values], ...(a.default === undefined ? {} : { default: a.default }) })) };
    },
  );

  app.get(
    `${API}/:id/logs`,
    {
      schema: {
        summary: "A run's logs",
        description:
          'The runner output, one line each (text/plain). `?follow=true` keeps the response open and streams new lines until the run is final. `?format=json` gives NDJSON objects `{seq, time, line}`; `?after=N` starts after line N.',
        tags: ['scaffolds'],
        params: idParamsSchema,
        querystring: logsQuerySchema,
        response: { ...errorResponses },
      },
    },
    async (request, reply) => {
      const { follow, format, after } = request.query;
      const signal = AbortSignal.any([closing.signal, abortOnClose(reply)]);
      const lines = await service.openLogs(request.params.id, { follow: follow === 'true', afterSeq: after ?? 0, signal });
      const json = format === 'json';
      void reply
        .type(json ? 'application/x-ndjson; charset=utf-8' : 'text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff');
      // Proxies (nginx) would otherwise hold a followed stream back.
      if (follow === 'true') void reply.header('x-accel-buffering', 'no');
      // A stream bypasses the serializer; the response schemas only describe errors here.
      return reply.send(Readable.from(renderLog(lines, json)) as never);
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
        response: { 200: runViewSchema, ...errorResponses },
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
        response: { 202: acceptedSchema, ...errorResponses, 413: errorSchema, 415: errorSchema },
      },
    },
    async (request, reply) => {
      const run = await service.retry(request.params.id, { secrets: secretsOf(request.body) }, callerOf(request));
      runsCreated.inc({ kind: 'retry' });
      return reply.status(202).header('location', `${API}/${run.id}`).send(acceptedView(run));
    },
  );

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
        logger.warn({ err: describe(error) }, 'health check failed: the run store does not answer');
        return reply.status(503).send({ status: 'unavailable' as const });
      }
    },
  );

  app.get('/metrics', { schema: { summary: 'Prometheus metrics', tags: ['operations'], ...(metricsPublic ? { security: [] } : {}) } }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await registerUiRoutes(app as unknown as FastifyInstance, deps.ui ?? {});

  await app.ready();
  return app as unknown as FastifyInstance;
}

// ---------------------------------------------------------------------------

type WireRequest = z.infer<typeof scaffoldRequestSchema>;
type WireSecrets = z.infer<typeof retryRequestSchema>;

function toScaffoldRequest(body: WireRequest): ScaffoldRequest {
  const repository = body.repository;
  return {
    cluster: body.cluster,
    ...(repository?.url === undefined && repository?.branch === undefined
      ? {}
      : { repository: { ...(repository.url === undefined ? {} : { url: repository.url }), ...(repository.branch === undefined ? {} : { branch: repository.branch }) } }),
    secrets: secretsOf(body),
  };
}

function secretsOf(body: WireSecrets | undefined): RunSecrets {
  const credentials = body?.repository?.credentials;
  const kubeconfig = body?.kubeconfig;
  return {
    ...(credentials === undefined ? {} : { repositoryCredentials: { token: credentials.token, ...(credentials.username === undefined ? {} : { username: credentials.username }) } }),
    ...(kubeconfig?.secretRef !== undefined
      ? { kubeconfig: { kind: 'secretRef' as const, ...kubeconfig.secretRef } }
      : kubeconfig?.inline !== undefined
        ? { kubeconfig: { kind: 'inline' as const, value: kubeconfig.inline } }
        : {}),
    ...(body?.sealing === undefined ? {} : { certificate: body.sealing.certificate }),
    ...(body?.registry_pull_secret === undefined ? {} : { registryDockerconfigjson: body.registry_pull_secret.dockerconfigjson }),
  };
}

/** A run as the API shows it: snake_case, ISO timestamps, explicit nulls, no credential. */
function runView(run: ScaffoldRun): z.output<typeof runViewSchema> {
  return {
    id: run.id,
    status: run.status,
    step: run.step,
    step_name: run.stepName ?? null,
    message: run.message,
    cluster: { name: run.cluster.name, domain: run.cluster.domain, region: run.cluster.region },
    repository: { url: withoutCredentials(run.repositoryUrl), branch: run.branch },
    reference: run.reference,
    job: run.job,
    gitops_path: run.gitopsPath ?? null,
    commits: run.commits.map((c) => ({ pass: c.pass, sha: c.sha })),
    attempt: run.attempt,
    sealing: run.sealing,
    created_by: run.createdBy,
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
  };
}

function stepView(step: RunStep): z.output<typeof runStepSchema> {
  return {
    step: step.step,
    name: step.name,
    status: step.status,
    ...(step.startedAt === undefined ? {} : { started_at: step.startedAt.toISOString() }),
    ...(step.finishedAt === undefined ? {} : { finished_at: step.finishedAt.toISOString() }),
    ...(step.durationMs === undefined ? {} : { duration_ms: step.durationMs }),
    ...(step.message === undefined ? {} : { message: step.message }),
  };
}

function acceptedView(run: ScaffoldRun): z.output<typeof acceptedSchema> {
  return { id: run.id, job: run.job, status: run.status, attempt: run.attempt };
}

function dryRunView(request: ScaffoldRequest, result: DryRunResult): z.output<typeof dryRunSchema> {
  return {
    dry_run: true,
    cluster: request.cluster,
    repository: { url: withoutCredentials(result.repositoryUrl), branch: result.branch },
    reference: result.reference,
    gitops_path: result.preview.gitopsPath,
    files: result.preview.files.map((f) => ({
      path: f.path,
      change: f.change,
      ...(f.content === undefined ? {} : { content: f.content }),
      // Passed on when the previewer includes the current content (the dashboard's diff view uses it).
      ...('previousContent' in f && typeof f.previousContent === 'string' ? { previous_content: f.previousContent } : {}),
    })),
  };
}

/** Defence in depth: request URLs cannot hold credentials, but a configured default might. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '' && (parsed.username === '' || parsed.protocol === 'ssh:')) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

async function* renderLog(lines: AsyncIterable<LogLine>, json: boolean): AsyncGenerator<string> {
  for await (const line of lines) {
    yield json ? `${JSON.stringify({ seq: line.seq, time: line.time.toISOString(), line: line.line })}\n` : `${line.line}\n`;
  }
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

/**
 * Validates a request part with its zod schema. Failures become our
 * ValidationError with one field per issue (`cluster.name`, `repository.url`),
 * so the error handler renders them like any other invalid input.
 */
const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const part = httpPart === 'querystring' ? 'query' : (httpPart ?? 'body');
  return (data: unknown) => {
    // reportInput only lets us tell "missing" from "wrong type" below; the input never reaches a message.
    const result = schema.safeParse(data, { error: friendlyMessage, reportInput: true });
    if (result.success) return { value: result.data };
    for (const issue of result.error.issues as { code: string; path: PropertyKey[]; message: string; input?: unknown }[]) {
      const absent = issue.input === undefined || (issue.path.length === 0 && issue.input === null);
      if (issue.code === 'invalid_type' && absent) issue.message = issue.path.length === 0 ? 'a JSON object is required' : 'is required';
      delete issue.input;
    }
    const issues: FieldIssue[] = fieldIssuesOf(result.error).map((issue) => ({ field: issue.field === '' ? part : issue.field, message: issue.message }));
    return { error: new ValidationError(issues) };
  };
};

/** zod's default messages, phrased for API callers; never quoting the input. */
function friendlyMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type') {
    return `must be ${issue.expected === 'object' ? 'an object' : issue.expected === 'array' ? 'an array' : `a ${issue.expected}`}`;
  }
  return undefined;
}

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly fields?: readonly FieldIssue[] };
}

const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
};

/** The single mapping from a thrown value to an HTTP status and JSON body. */
function errorResponseOf(error: unknown, bodyLimit: number): { status: number; body: ErrorBody } {
  if (error instanceof ValidationError) {
    return { status: 400, body: { error: { code: 'invalid_input', message: error.message, fields: error.issues.map((i) => ({ field: i.field, message: i.message })) } } };
  }
  if (error instanceof AppError) {
    const status = STATUS_OF_CODE[error.code];
    if (status !== undefined) return { status, body: { error: { code: error.code, message: error.message } } };
    return { status: 500, body: { error: { code: 'internal', message: 'internal error' } } };
  }
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { error: { code: 'payload_too_large', message: `the request body exceeds ${bodyLimit} bytes` } } };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { error: { code: 'unsupported_media_type', message: 'only application/json request bodies are accepted' } } };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: { error: { code: 'invalid_input', message: 'the request body is empty', fields: [{ field: 'body', message: 'is required' }] } } };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: { error: { code: 'invalid_input', message: 'the request body is not valid JSON', fields: [{ field: 'body', message: 'is not valid JSON' }] } } };
    default:
      break;
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // JSON.parse's SyntaxError (and secure-json-parse's prototype-poisoning
    // error) quote part of the body: say what is wrong without it.
    const message = error instanceof SyntaxError || status === 400 ? 'the request body is not valid JSON' : 'the request was rejected';
    return { status, body: { error: { code: status === 400 ? 'invalid_input' : 'bad_request', message } } };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } } };
}

/** What an unexpected error looks like in a log line: type, message, code and stack (logs, never responses). */
function describe(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  return { type: error.name, message: error.message, code: (error as { code?: unknown }).code, stack: error.stack };
}
