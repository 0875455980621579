/**
 * The configuration of `gitops-scaffolder serve`, read once from the environment
 * by the composition root. No other module reads `process.env`.
 *
 * Error messages name the variable and the rule, never the value: several of
 * these variables (API_TOKENS, DATABASE_URL) carry credentials.
 */
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { ValidationError, type FieldIssue } from '../errors.js';
import { clusterNameSchema } from '../model/cluster-spec.js';
import { packageVersion } from '../package-paths.js';
import { checkRepositoryUrl, parseRepositoryUrl, type RepositoryUrlPolicy } from '../model/repository-url.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

/** How runs execute: child processes on this host, or Kubernetes Jobs. */
export type ExecutorKind = 'local' | 'kubernetes';

/** How callers are authenticated: configured bearer tokens, or ServiceAccount tokens checked with TokenReview. */
export type AuthMode = 'static' | 'tokenreview';

/** pino's level names. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * The runner image used when SCAFFOLD_RUNNER_IMAGE is unset: the scaffold-runner
 * image (`Dockerfile.runner`) of the release this service is, tagged with the
 * package version. Not the service image (`Dockerfile`), which runs `serve`.
 */
export const DEFAULT_RUNNER_IMAGE = `ghcr.io/kubeopera/scaffold-runner:${packageVersion()}`;

/**
 * The runner pods' ServiceAccount when SCAFFOLD_RUNNER_SERVICE_ACCOUNT is unset:
 * the one `deploy/base/serviceaccount.yaml` creates in JOB_NAMESPACE (no
 * bindings, no token).
 */
export const DEFAULT_RUNNER_SERVICE_ACCOUNT = 'scaffold-runner';

/**
 * A runner pod's /tmp `sizeLimit` when SCAFFOLD_RUNNER_TMP_SIZE_LIMIT is unset: one
 * partial clone and two rendered passes. A fleet repository of a thousand clusters
 * is a few hundred MiB checked out; beyond this the kubelet evicts the pod instead
 * of filling the node's disk.
 */
export const DEFAULT_RUNNER_TMP_SIZE_LIMIT = '2Gi';

/**
 * A runner pod's scratch volume `sizeLimit` when SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT
 * is unset. The volume is in memory and holds the files of the sparse checkout
 * (base/, the reference and the run's clusters: about 3 MB for a batch of 16, 6 MB
 * for 32, on the default platform) and verify's copy of one cluster's (about 1 MB).
 * What it holds counts against the runner's memory limit; past its own limit the
 * kubelet evicts the pod rather than let a hostile tree eat the node's memory.
 */
export const DEFAULT_RUNNER_SCRATCH_SIZE_LIMIT = '256Mi';

/** A runner container's memory limit when SCAFFOLD_RUNNER_MEMORY_LIMIT is unset. */
export const DEFAULT_RUNNER_MEMORY_LIMIT = '1Gi';

/**
 * What a runner's memory limit must hold beside a full scratch volume: the
 * runner process itself (a verified run peaks near 260 MB; a batch upgrade
 * holds more) and its git and kubectl children. A scratch limit that leaves
 * less is refused: the volume's files count against the memory limit, so the
 * pod would be OOM-killed, mid-push perhaps, before the kubelet evicted it for
 * the volume.
 */
export const RUNNER_PROCESS_MEMORY = '512Mi';

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/** The bytes of a size kubernetesSize() accepted ("512Mi", "1G", "2147483648"). */
export function sizeBytes(size: string): number {
  const [, digits = '', unit = ''] = /^([0-9]+)([A-Za-z]*)$/.exec(size) ?? [];
  const scale = SIZE_UNITS[unit];
  if (digits === '' || scale === undefined) throw new Error(`not a size: ${size}`);
  return Number(digits) * scale;
}

/** A Kubernetes size: a whole binary or decimal quantity above zero ("0" would be read as no space at all). */
function kubernetesSize(fallback: string) {
  return z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[1-9][0-9]{0,17}(Ki|Mi|Gi|Ti|k|M|G|T)?$/, 'must be a size such as 512Mi, 2Gi or 1G')
      .default(fallback),
  );
}

/** The validated configuration of the HTTP service. */
export interface ServiceConfig {
  /** @default 8080 */
  readonly port: number;
  /** @default '0.0.0.0' */
  readonly host: string;
  /**
   * Static bearer tokens (AUTH_MODE=static), each at least 16 characters. Empty
   * outside a cluster: the service then generates one at first start (embedded mode).
   */
  readonly apiTokens: readonly string[];
  /** PostgreSQL connection string; undefined means embedded PGlite under `dataDir`. */
  readonly databaseUrl?: string;
  /** Absolute path. @default `<cwd>/.gitops-scaffolder` */
  readonly dataDir: string;
  /** @default 'kubernetes' when KUBERNETES_SERVICE_HOST is set, else 'local' */
  readonly executor: ExecutorKind;
  /** @default 'kubeopera-provisioning' */
  readonly jobNamespace: string;
  /** @default DEFAULT_RUNNER_IMAGE */
  readonly runnerImage: string;
  /** The ServiceAccount runner pods run as, in `jobNamespace`. @default DEFAULT_RUNNER_SERVICE_ACCOUNT */
  readonly runnerServiceAccount: string;
  /** `sizeLimit` of a runner pod's /tmp (a Kubernetes quantity); past it the kubelet evicts the pod. @default DEFAULT_RUNNER_TMP_SIZE_LIMIT */
  readonly runnerTmpSizeLimit: string;
  /**
   * `sizeLimit` of a runner pod's in-memory scratch volume (a Kubernetes
   * quantity); at most `runnerMemoryLimit` less RUNNER_PROCESS_MEMORY.
   * @default DEFAULT_RUNNER_SCRATCH_SIZE_LIMIT
   */
  readonly runnerScratchSizeLimit: string;
  /** The runner container's memory limit (a Kubernetes quantity), its scratch volume included. @default DEFAULT_RUNNER_MEMORY_LIMIT */
  readonly runnerMemoryLimit: string;
  /** Secrets in `jobNamespace` the kubelet pulls a private runner image with (each Job's imagePullSecrets). @default none */
  readonly runnerImagePullSecrets: readonly string[];
  /** The repository runs push to when a request names none; undefined means the embedded default (local executor) or none. */
  readonly defaultGitopsRepoUrl?: string;
  /**
   * When not empty, the only repositories requests may name: URLs, or prefixes
   * ending in "/", and local repositories by path or file:// URL.
   */
  readonly allowedRepositoryUrls: readonly string[];
  /** @default 'development' */
  readonly referenceEnvironment: string;
  /** @default 'tokenreview' when KUBERNETES_SERVICE_HOST is set, else 'static' */
  readonly authMode: AuthMode;
  /** Audiences passed to TokenReview; empty means the API server's default. */
  readonly tokenReviewAudiences: readonly string[];
  /**
   * `system:serviceaccount:NS:NAME` (or `NS:*`) identities allowed to call the API at all
   * (AUTH_MODE=tokenreview); empty means every authenticated caller, RBAC deciding what each may do.
   */
  readonly allowedServiceAccounts: readonly string[];
  /** Serve /metrics without authentication. @default false */
  readonly metricsPublic: boolean;
  /** @default 'info' */
  readonly logLevel: LogLevel;
  /** Largest accepted request body. @default 65536 */
  readonly bodyLimitBytes: number;
  /**
   * Longest a client may take to send a whole request, headers and body; past it
   * the service answers 408 and closes the connection, so a slow body cannot hold one. @default 30000
   */
  readonly requestTimeoutMs: number;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;
// A container image reference: [registry/]path[:tag][@digest], without spaces.
const IMAGE_REFERENCE = /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;

/** A Kubernetes object's name (a DNS-1123 subdomain) of `kind`; `subject` begins each message ("must", "each entry must"). */
const objectName = (kind: string, subject = 'must') =>
  z.string().max(253, `${subject} be at most 253 characters`).regex(DNS_SUBDOMAIN, `${subject} be a ${kind} name: lower-case letters, digits, "-" and "."`);

const blankToUndefined = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);

const commaList = (value: unknown): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
    : value;

const booleanFlag = z.preprocess(
  (value) => (typeof value === 'string' ? value.trim().toLowerCase() : value),
  z.enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' }).transform((v) => v === 'true' || v === '1' || v === 'yes'),
);

// The default sits inside the preprocess: a blank value becomes undefined there,
// and only then can the default apply (outside, it would see the blank string).
const integer = (min: number, max: number, fallback: number) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(min, `must be at least ${min}`)
      .max(max, `must be at most ${max}`)
      .default(fallback),
  );

/** The default repository: a request's rules, except that it may be any local repository. */
const DEFAULT_REPOSITORY_POLICY: RepositoryUrlPolicy = { scp: false, plainTransports: 'loopback', localRepositories: 'any' };

/** A repository URL git reads as written, and, when given, allowed by `policy`. */
const repositoryUrl = (policy?: RepositoryUrlPolicy) =>
  z.string().superRefine((value, ctx) => {
    try {
      if (policy === undefined) parseRepositoryUrl(value);
      else checkRepositoryUrl(value, policy);
    } catch (error) {
      // The parser's messages never repeat the URL, which may carry a token.
      ctx.addIssue({
        code: 'custom',
        message: error instanceof ValidationError ? (error.issues[0]?.message ?? 'is not a repository URL') : 'is not a repository URL',
      });
    }
  });

const envSchema = z.object({
  PORT: integer(0, 65535, 8080),
  HOST: z.preprocess(blankToUndefined, z.string().default('0.0.0.0')),
  API_TOKENS: z.preprocess(
    commaList,
    z
      .array(z.string())
      .superRefine((tokens, ctx) => {
        // Report positions, never the tokens themselves.
        tokens.forEach((token, index) => {
          if (token.length < 16) ctx.addIssue({ code: 'custom', message: `token #${index + 1} is shorter than 16 characters` });
          if (/\s/.test(token)) ctx.addIssue({ code: 'custom', message: `token #${index + 1} contains whitespace` });
        });
        if (new Set(tokens).size !== tokens.length) ctx.addIssue({ code: 'custom', message: 'the same token is listed twice' });
      })
      .default([]),
  ),
  DATABASE_URL: z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((value) => /^postgres(ql)?:\/\//.test(value) && URL.canParse(value), 'must be a postgres:// or postgresql:// URL')
      .optional(),
  ),
  DATA_DIR: z.preprocess(blankToUndefined, z.string().optional()),
  EXECUTOR: z.preprocess(blankToUndefined, z.enum(['local', 'kubernetes'], { error: 'must be local or kubernetes' }).optional()),
  JOB_NAMESPACE: z.preprocess(blankToUndefined, clusterNameSchema.default('kubeopera-provisioning')),
  SCAFFOLD_RUNNER_IMAGE: z.preprocess(
    blankToUndefined,
    z.string().regex(IMAGE_REFERENCE, 'must be a container image reference such as registry/name:tag or name@sha256:…').default(DEFAULT_RUNNER_IMAGE),
  ),
  SCAFFOLD_RUNNER_SERVICE_ACCOUNT: z.preprocess(blankToUndefined, objectName('ServiceAccount').default(DEFAULT_RUNNER_SERVICE_ACCOUNT)),
  SCAFFOLD_RUNNER_TMP_SIZE_LIMIT: kubernetesSize(DEFAULT_RUNNER_TMP_SIZE_LIMIT),
  SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT: kubernetesSize(DEFAULT_RUNNER_SCRATCH_SIZE_LIMIT),
  SCAFFOLD_RUNNER_MEMORY_LIMIT: kubernetesSize(DEFAULT_RUNNER_MEMORY_LIMIT),
  SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS: z.preprocess(commaList, z.array(objectName('Secret', 'each entry must')).default([])),
  DEFAULT_GITOPS_REPO_URL: z.preprocess(blankToUndefined, repositoryUrl(DEFAULT_REPOSITORY_POLICY).optional()),
  ALLOWED_REPOSITORY_URLS: z.preprocess(commaList, z.array(repositoryUrl()).default([])),
  REFERENCE_ENVIRONMENT: z.preprocess(blankToUndefined, clusterNameSchema.default(REFERENCE_ENVIRONMENT)),
  AUTH_MODE: z.preprocess(blankToUndefined, z.enum(['static', 'tokenreview'], { error: 'must be static or tokenreview' }).optional()),
  TOKEN_REVIEW_AUDIENCES: z.preprocess(commaList, z.array(z.string().regex(/^\S+$/, 'must not contain whitespace')).default([])),
  ALLOWED_SERVICE_ACCOUNTS: z.preprocess(
    commaList,
    z
      .array(
        z.string().refine((value) => {
          const match = SERVICE_ACCOUNT.exec(value);
          const [namespace = '', name = ''] = match === null ? [] : [match[1], match[2]];
          return (
            match !== null && DNS_SUBDOMAIN.test(namespace) && namespace.length <= 63 && (name === '*' || (DNS_SUBDOMAIN.test(name) && name.length <= 253))
          );
        }, 'each entry must be system:serviceaccount:NAMESPACE:NAME (NAME may be * for every ServiceAccount of NAMESPACE)'),
      )
      .default([]),
  ),
  METRICS_PUBLIC: z.preprocess(blankToUndefined, booleanFlag.default(false)),
  LOG_LEVEL: z.preprocess(
    (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim().toLowerCase() : undefined),
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'must be one of fatal, error, warn, info, debug, trace, silent' })
      .default('info'),
  ),
  BODY_LIMIT_BYTES: integer(1024, 10 * 1024 * 1024, 65536),
  // 30 s carries the largest body (10 MiB) at ~350 kB/s, yet a stalled client
  // holds a connection and its file descriptor for no longer than that.
  REQUEST_TIMEOUT_MS: integer(1000, 600_000, 30_000),
  KUBERNETES_SERVICE_HOST: z.preprocess(blankToUndefined, z.string().optional()),
});

/**
 * Reads and validates the service configuration.
 *
 * @param cwd - base of a relative DATA_DIR and of its default
 * @throws ValidationError with one issue per bad variable (field = variable name); values are never echoed
 */
export function loadServiceConfig(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): ServiceConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ValidationError(
      parsed.error.issues.map((issue) => ({
        field: String(issue.path[0] ?? ''),
        // Every message here is one of ours or zod's type message: none quotes the value.
        message: issue.message,
      })),
    );
  }
  const e = parsed.data;
  const inCluster = e.KUBERNETES_SERVICE_HOST !== undefined;
  const authMode: AuthMode = e.AUTH_MODE ?? (inCluster ? 'tokenreview' : 'static');
  const issues: FieldIssue[] = [];
  // Outside a cluster the service generates a token when none is configured (and
  // prints it once); in a pod that would land in the pod's log, so it must be given.
  if (authMode === 'static' && e.API_TOKENS.length === 0 && inCluster) {
    issues.push({ field: 'API_TOKENS', message: 'must list at least one token when AUTH_MODE is static in a cluster' });
  }
  const scratchRoom = sizeBytes(e.SCAFFOLD_RUNNER_MEMORY_LIMIT) - sizeBytes(RUNNER_PROCESS_MEMORY);
  if (sizeBytes(e.SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT) > scratchRoom) {
    issues.push({
      field: 'SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT',
      message:
        `${e.SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT} must leave the runner process ${RUNNER_PROCESS_MEMORY} of its memory limit ` +
        `(SCAFFOLD_RUNNER_MEMORY_LIMIT ${e.SCAFFOLD_RUNNER_MEMORY_LIMIT}): the volume's files count against that limit, and a pod ` +
        'past it is OOM-killed instead of evicted. Lower it, or raise SCAFFOLD_RUNNER_MEMORY_LIMIT',
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);

  const dataDir = e.DATA_DIR === undefined ? resolve(cwd, '.gitops-scaffolder') : isAbsolute(e.DATA_DIR) ? e.DATA_DIR : resolve(cwd, e.DATA_DIR);
  return {
    port: e.PORT,
    host: e.HOST,
    apiTokens: e.API_TOKENS,
    ...(e.DATABASE_URL === undefined ? {} : { databaseUrl: e.DATABASE_URL }),
    dataDir,
    executor: e.EXECUTOR ?? (inCluster ? 'kubernetes' : 'local'),
    jobNamespace: e.JOB_NAMESPACE,
    runnerImage: e.SCAFFOLD_RUNNER_IMAGE,
    runnerServiceAccount: e.SCAFFOLD_RUNNER_SERVICE_ACCOUNT,
    runnerTmpSizeLimit: e.SCAFFOLD_RUNNER_TMP_SIZE_LIMIT,
    runnerScratchSizeLimit: e.SCAFFOLD_RUNNER_SCRATCH_SIZE_LIMIT,
    runnerMemoryLimit: e.SCAFFOLD_RUNNER_MEMORY_LIMIT,
    runnerImagePullSecrets: e.SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS,
    ...(e.DEFAULT_GITOPS_REPO_URL === undefined ? {} : { defaultGitopsRepoUrl: e.DEFAULT_GITOPS_REPO_URL }),
    allowedRepositoryUrls: e.ALLOWED_REPOSITORY_URLS,
    referenceEnvironment: e.REFERENCE_ENVIRONMENT,
    authMode,
    tokenReviewAudiences: e.TOKEN_REVIEW_AUDIENCES,
    allowedServiceAccounts: e.ALLOWED_SERVICE_ACCOUNTS,
    metricsPublic: e.METRICS_PUBLIC,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
  };
}
