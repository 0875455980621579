/**
 * The API's wire shapes: request schemas (zod; strict, so a misspelt field is an
 * error rather than silently ignored) and response schemas. They are also the
 * OpenAPI document. Shape only: what a value may mean (a URL's reach, a
 * kubeconfig's fields, a certificate's window) is the service's single
 * validation (`run-contract/run-inputs.ts`, `git/repository-url.ts`).
 */
import { ERROR_CODES } from '../errors.js';
import { RUN_ACTIONS, RUN_PASSES, runActionsDescribed } from '../model/run-action.js';
import { z } from 'zod';
import { clusterNameSchema, clusterSpecSchema } from '../model/cluster-spec.js';
import { branchSchema } from '../service/run-service.js';
import { FORGES, GITHUB_APP_FORGES, forgeDescriptor, forgeNameList } from '../model/forges.js';
import { NOTIFICATION_PROVIDERS } from '../gitops/notification-schema.js';

export const RUN_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const STEP_STATUSES = ['pending', 'running', 'succeeded', 'skipped', 'failed'] as const;

export const dnsLabel = clusterNameSchema;
export const dnsSubdomain = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and "."');
// Printable text without line breaks: a token or user name with a newline in it
// would be a header-injection vector once it reaches git's credential helper.
export const singleLine = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    .regex(/^[^\x00-\x1f\x7f]*$/, 'must not contain control characters or line breaks');

export const githubAppSchema = z
  .object({
    app_id: z.string({ error: 'must be a string' }).regex(/^[0-9]{1,20}$/, "must be the App's numeric id"),
    installation_id: z.string({ error: 'must be a string' }).regex(/^[0-9]{1,20}$/, "must be the installation's numeric id"),
    private_key: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(16_384, 'must be at most 16 KiB')
      .describe("The App's private key (PEM)."),
  })
  .strict()
  .describe('A GitHub App installed on the repository (delivery.forge github): the runner mints an installation token for the API and for git.');

export const credentialsSchema = z
  .object({ username: singleLine(256).optional(), token: singleLine(8192).optional(), github_app: githubAppSchema.optional() })
  .strict()
  .refine((value) => value.token !== undefined || value.github_app !== undefined, { path: ['token'], message: 'is required, unless github_app is given' })
  .describe('Used for this run only: passed to the runner, never stored or logged. A token, or a GitHub App.');

// Shape only: what a URL may reach is the service's configured policy (git/repository-url.ts), checked once there.
export const repositoryUrlSchema = z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(2048, 'must be at most 2048 characters');

export const secretRefSchema = z
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

export const kubeconfigSchema = z
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
  .describe(
    "Access to the new cluster, to wait for its Sealed Secrets controller and fetch its certificate. A Secret in the service's cluster (secretRef, Kubernetes executor only) or the kubeconfig text (inline).",
  );

export const sealingSchema = z
  .object({ certificate: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(65_536, 'must be at most 64 KiB') })
  .strict()
  .describe("The new cluster's Sealed Secrets certificate (PEM), like `kubeseal --cert`: steps 4–5 are then skipped.");

export const registryPullSecretSchema = z
  .object({
    dockerconfigjson: z
      .string({ error: 'must be a string' })
      .min(2, 'must not be empty')
      .max(65_536, 'must be at most 64 KiB')
      .describe('A .dockerconfigjson: an "auths" object with at least one registry and its credentials.'),
  })
  .strict()
  .describe('Your own registry pull secret instead of a generated one.');

export const notificationsSchema = z
  .object({
    provider: z
      .enum(NOTIFICATION_PROVIDERS, { error: `must be one of ${NOTIFICATION_PROVIDERS.join(', ')}` })
      .describe(
        "notification-controller's Provider type: slack (an incoming webhook), msteams (a Teams workflow webhook) or generic (any https endpoint taking Flux's event JSON). The target platform may offer fewer (scaffold.yaml notifications.providers).",
      ),
    address: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(2048, 'must be at most 2048 characters')
      .describe(
        "The webhook URL (https://). A credential: sealed into the cluster's tree like every other (SealedSecret, strict scope), never stored, logged or echoed.",
      ),
  })
  .strict()
  .describe(
    'Failure notifications: a Provider and an Alert on every Kustomization and HelmRelease for error events. Needs a platform that declares them (scaffold.yaml notifications). Without it the cluster gets none, unless it had them: a re-render keeps the type and the sealed address.',
  );

export const waitForReadySchema = z
  .boolean({ error: 'must be true or false' })
  .describe(
    "After the last push, wait until the cluster's Flux Kustomizations report Ready at the pushed commit; the run fails, naming them, if they do not. Needs kubeconfig (sealing.certificate may be given as well).",
  );
export const readyTimeoutSchema = z
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(10, 'must be at least 10')
  .max(7200, 'must be at most 7200')
  .describe('How long wait_for_ready waits, in seconds. Default: 900.');
// Shape only: the rules (a forge for pull_request, an https api_url) are the runner's, checked once in the service (delivery/delivery-settings.ts).
export const deliverySchema = z
  .object({
    mode: z
      .enum(['push', 'pull_request'], { error: 'must be push or pull_request' })
      .describe(
        'push (default): straight to the branch. pull_request: each pass on `scaffold/<cluster>/<pass>` through a pull/merge request, merged before the next pass.',
      ),
    auto_merge: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe('Merge each request once the forge says it is mergeable (checks passed). Default: false, a person merges.'),
    forge: z
      .enum(FORGES, { error: `must be ${forgeNameList()}` })
      .optional()
      .describe('Who hosts the repository; required with pull_request.'),
    api_url: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(2048, 'must be at most 2048 characters')
      .optional()
      .describe("The forge's API, e.g. https://ghe.example.com/api/v3. Default: derived from the repository URL."),
  })
  .strict()
  .describe("How the two passes reach the branch. The forge API is called with repository.credentials.token (or the runner's GitHub App).");

export const scaffoldRequestSchema = z
  .object({
    // enable_layers is not carried to the runner yet (no run column, no SCAFFOLD_ variable): refused as unknown
    // rather than dropped; `generate-gitops-env render --enable-layers` sets it, and later runs keep it.
    cluster: clusterSpecSchema.omit({ enable_layers: true }).strict(),
    repository: z
      .object({
        url: repositoryUrlSchema
          .optional()
          .describe("https://, ssh:// or file:// (http:// and git:// to loopback only); no credentials in the URL. Default: the service's default repository."),
        branch: branchSchema.optional().describe('Default: main.'),
        credentials: credentialsSchema.optional(),
      })
      .strict()
      .optional(),
    kubeconfig: kubeconfigSchema.optional(),
    sealing: sealingSchema.optional(),
    registry_pull_secret: registryPullSecretSchema.optional(),
    notifications: notificationsSchema.optional(),
    wait_for_ready: waitForReadySchema.optional(),
    ready_timeout_seconds: readyTimeoutSchema.optional(),
    delivery: deliverySchema.optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    // The runner reads a GitHub App only for GitHub; anywhere else it would be silently unused.
    if (
      value.repository?.credentials?.github_app !== undefined &&
      !(value.delivery?.forge !== undefined && forgeDescriptor(value.delivery.forge).acceptsGithubApp)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['repository', 'credentials', 'github_app'],
        message: `needs delivery.forge ${GITHUB_APP_FORGES.map((forge) => `"${forge}"`).join(' or ')}`,
      });
    }
  })
  .describe('Only cluster is required by the shape; one of kubeconfig or sealing.certificate must be given.');

export const retryRequestSchema = z
  .object({
    repository: z.object({ credentials: credentialsSchema.optional() }).strict().optional(),
    kubeconfig: kubeconfigSchema.optional(),
    sealing: sealingSchema.optional(),
    registry_pull_secret: registryPullSecretSchema.optional(),
    notifications: notificationsSchema.optional(),
    wait_for_ready: waitForReadySchema.optional(),
    ready_timeout_seconds: readyTimeoutSchema.optional(),
  })
  .strict()
  .describe('The secrets of the retried run, sent again: the service never stores them.');

export const credentialNameSchema = z
  .string({ error: 'must be a string' })
  .max(317, 'must be at most 317 characters')
  .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a credential of scaffold.yaml: name or namespace/name');
export const rotateRequestSchema = z
  .object({
    credentials: z
      .array(credentialNameSchema)
      .min(1, 'must name at least one credential')
      .max(100, 'must name at most 100 credentials')
      .optional()
      .describe(
        "The credentials to rotate. Same values (the default): the ones whose SealedSecrets the cluster's controller re-encrypts; default every one not sealed with the certificate it serves now. With fresh_values: the ones sealed anew; default all.",
      ),
    fresh_values: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe(
        "Seal fresh values instead of keeping them, and write, beside each resealed credential whose database keeps the password (passwordChange in scaffold.yaml), the Job that sets the new value there once the controller has unsealed it, named by the hash of the new ciphertexts (as generate-gitops-env rotate --fresh-values does); the run's result names the workloads to restart. A credential the caller supplies (the registry pull secret) named in `credentials` fails the run before anything is pushed: it has no fresh value to make up. Default: false: the controller re-encrypts the same values (needs kubeconfig), nothing changes in the databases.",
      ),
    repository: z
      .object({
        url: repositoryUrlSchema.optional().describe("Default: the repository of the cluster's latest run (on `branch` when given)."),
        branch: branchSchema.optional().describe("Default: the branch of the cluster's latest run (in `url` when given)."),
        credentials: credentialsSchema.optional(),
      })
      .strict()
      .optional(),
    kubeconfig: kubeconfigSchema.optional(),
    sealing: sealingSchema.optional(),
    wait_for_ready: waitForReadySchema.optional(),
    ready_timeout_seconds: readyTimeoutSchema.optional(),
  })
  .strict()
  .describe("kubeconfig is required: the cluster's controller re-encrypts the SealedSecrets and serves the certificate they are then sealed for.");
export const clusterParamsSchema = z.object({ name: clusterNameSchema });

export const trueFalse = z.enum(['true', 'false'], { error: 'must be true or false' });
export const createQuerySchema = z.object({ dry_run: trueFalse.optional() }).strict();
export const listQuerySchema = z
  .object({
    cluster: clusterNameSchema.optional(),
    // A cluster is its name in one branch of one repository: these narrow `cluster` to one of them.
    repository_url: repositoryUrlSchema.optional(),
    branch: branchSchema.optional(),
    status: z.enum(RUN_STATUSES, { error: `must be one of ${RUN_STATUSES.join(', ')}` }).optional(),
    limit: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(100, 'must be at most 100').optional(),
    cursor: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters').optional(),
  })
  .strict();
export const logsQuerySchema = z
  .object({
    follow: trueFalse.optional(),
    format: z.enum(['text', 'json'], { error: 'must be text or json' }).optional(),
    after: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be at least 0').optional(),
  })
  .strict();
export const catalogQuerySchema = z
  .object({
    repository_url: repositoryUrlSchema.optional().describe("Like a request's repository.url. Default: the service's default repository."),
    branch: branchSchema.optional().describe('Default: main.'),
  })
  .strict();
export const catalogSchema = z.object({
  attributes: z
    .array(z.object({ name: z.enum(['role', 'infra_provider', 'dns_provider']), values: z.array(z.string()), default: z.string().optional() }))
    .describe("The cluster attributes the platform's layer catalog selects layers by; empty for a platform without a catalog."),
});
export const graphQuerySchema = z.object({ format: z.enum(['svg', 'json'], { error: 'must be svg or json' }).optional() }).strict();
export const idParamsSchema = z.object({
  // scaffold-<id> must stay a DNS-1123 label (the Job name), so ids are too.
  id: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,52}[a-z0-9])?$/, 'must be a scaffold run id'),
});

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  })
  .describe('Every error has this shape.');

export const runViewSchema = z.object({
  id: z.string(),
  action: z.enum(RUN_ACTIONS).describe(`${runActionsDescribed()}.`),
  status: z.enum(RUN_STATUSES),
  step: z
    .number()
    .int()
    .describe("1 to the action's step count (7 for a scaffold, 3 for an upgrade, 5 for a removal) while running; 0 before the run started."),
  step_name: z.string().nullable(),
  message: z.string(),
  error_code: z
    .enum(ERROR_CODES)
    .nullable()
    .describe("A failed run: what kind of failure ended it (the runner's error code, `internal` when the runner ended without reporting one); null otherwise."),
  transient: z
    .boolean()
    .nullable()
    .describe(
      'A failed run: true when retrying it later may succeed (a git remote or the Kubernetes API unreachable, a wait timed out, a push lost a race), false when the same request will fail again; null unless failed.',
    ),
  cluster: z.object({ name: z.string(), domain: z.string(), region: z.string() }),
  repository: z.object({ url: z.string().describe('Without credentials.'), branch: z.string() }),
  reference: z.string(),
  job: z.string(),
  gitops_path: z.string().nullable(),
  commits: z.array(
    z.object({
      pass: z.enum(RUN_PASSES),
      sha: z.string(),
      cluster: z.string().optional().describe("A batch upgrade run's commit: the cluster it upgrades (absent: the run's cluster)."),
    }),
  ),
  batch: z
    .array(z.string())
    .nullable()
    .describe(
      "A rollout's batch upgrade run: the clusters it upgrades after `cluster`, each verified and committed on its own, all landed in one push; each one's outcome is on the rollout. null for a run about one cluster.",
    ),
  attempt: z.number().int(),
  sealing: z.enum(['certificate', 'kubeconfig', 'none']).describe('none: an upgrade or removal, which seal nothing.'),
  rotation: z
    .enum(['same', 'fresh'])
    .nullable()
    .describe(
      "A scaffold run started by POST /api/v1/clusters/{name}/rotate: what its resealed credentials hold, `same` values re-encrypted by the cluster's controller or `fresh` ones (its log's `credential` events name them); null for any other run.",
    ),
  changes: z
    .object({
      added: z.number().int(),
      modified: z.number().int(),
      removed: z.number().int(),
      credentials_kept: z.number().int().optional(),
      kept: z.array(z.string()).optional(),
    })
    .nullable()
    .describe(
      "An upgrade's or removal's commit, in files (kept: files of the cluster's directory a removal left, e.g. flux-system/); null for a scaffold or before the run ended.",
    ),
  delivery: z
    .object({ mode: z.enum(['push', 'pull_request']), auto_merge: z.boolean(), forge: z.string().optional(), api_url: z.string().optional() })
    .describe('How the passes reach the branch.'),
  review_requests: z
    .array(
      z.object({
        pass: z.enum(RUN_PASSES),
        forge: z.enum(FORGES),
        number: z.number().int().describe('The pull request number (GitLab: the merge request iid).'),
        url: z.string().describe('The page a person reviews it on.'),
        state: z.enum(['open', 'merged', 'closed']).describe('As the runner last saw it.'),
        branch: z.string().optional().describe('The branch the pass was pushed to: scaffold/<cluster>/<pass>.'),
        updated_at: z.string().describe('When the runner last reported on it.'),
      }),
    )
    .describe('The pull/merge requests of the passes (delivery.mode pull_request), in the order they were opened; empty for push.'),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export const runStepSchema = z.object({
  step: z.number().int().describe("1 to the action's step count."),
  name: z.string(),
  status: z.enum(STEP_STATUSES),
  started_at: z.string().optional(),
  finished_at: z.string().optional(),
  duration_ms: z.number().int().optional(),
  message: z.string().optional().describe('Why the step was skipped or failed.'),
});
export const runDetailSchema = runViewSchema.extend({
  steps: z.array(runStepSchema).describe("The action's steps (seven for a scaffold), derived from the runner's log events."),
});
export const acceptedSchema = z.object({ id: z.string(), job: z.string(), status: z.enum(RUN_STATUSES), attempt: z.number().int() });
export const listSchema = z.object({ items: z.array(runViewSchema), next_cursor: z.string().optional() });
export const dryRunSchema = z.object({
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
export const healthSchema = z.object({ status: z.enum(['ok', 'unavailable']) });

/** What each error status means, as the API description shows it. */
const ERROR_MEANINGS = {
  400: 'Invalid input: the body, a parameter or the query (`error.fields` names each bad field)',
  401: 'No bearer token, or one the service does not accept',
  403: 'The caller may not do this (RBAC), or the repository is not one the service is configured to read',
  404: 'Not found',
  409: 'Conflicts with the current state',
  413: 'The request body is too large',
  415: 'The request body is not application/json',
  503: 'A dependency (database, Kubernetes API, Git remote) did not answer; retry after Retry-After',
} as const;

/** An error status a route answers because of its own input or state (401, 403 and 503 every API route answers). */
export type RouteErrorStatus = 400 | 404 | 409 | 413 | 415;

/**
 * The error answers of an authenticated API route, each an `application/json`
 * error body: 401, 403 and 503, which every such route can answer, and
 * `statuses`, the ones its own input and state can cause, so a client
 * generated from the document handles what the route really answers.
 */
export function errorResponsesOf(
  ...statuses: RouteErrorStatus[]
): Record<number, { description: string; content: { 'application/json': { schema: typeof errorSchema } } }> {
  const all = [...new Set<keyof typeof ERROR_MEANINGS>([...statuses, 401, 403, 503])].sort((a, b) => a - b);
  return Object.fromEntries(all.map((status) => [status, { description: ERROR_MEANINGS[status], content: { 'application/json': { schema: errorSchema } } }]));
}

export type WireRequest = z.infer<typeof scaffoldRequestSchema>;
export type WireSecrets = z.infer<typeof retryRequestSchema>;
