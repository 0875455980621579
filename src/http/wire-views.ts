/**
 * Translations between the service's types and the wire: requests in, runs,
 * steps and dry runs out (snake_case, ISO timestamps, explicit nulls, never a
 * credential).
 */
import type { z } from 'zod';
import type { RawDeliverySettings } from '../delivery/delivery-settings.js';
import type { RunStep } from '../service/run-steps.js';
import type { DryRunResult, ScaffoldRequest } from '../service/run-service.js';
import type { RunSecrets, RunRecord } from '../run/run-record.js';
import type { acceptedSchema, dryRunSchema, runStepSchema, runViewSchema, WireRequest, WireSecrets } from './wire-schemas.js';

/** How long `wait_for_ready` waits when the request does not say: the runner's own default, 15 minutes. */
const DEFAULT_READY_TIMEOUT_SECONDS = 900;

export function toScaffoldRequest(body: WireRequest): ScaffoldRequest {
  const repository = body.repository;
  return {
    cluster: body.cluster,
    ...(repository?.url === undefined && repository?.branch === undefined
      ? {}
      : {
          repository: {
            ...(repository.url === undefined ? {} : { url: repository.url }),
            ...(repository.branch === undefined ? {} : { branch: repository.branch }),
          },
        }),
    ...(body.delivery === undefined ? {} : { delivery: toRawDelivery(body.delivery) }),
    secrets: secretsOf(body),
  };
}

/** A request's `delivery` as the service checks it (runs, upgrades, removals). */
export function toRawDelivery(delivery: NonNullable<WireRequest['delivery']>): RawDeliverySettings {
  return {
    mode: delivery.mode,
    ...(delivery.auto_merge === undefined ? {} : { autoMerge: delivery.auto_merge }),
    ...(delivery.forge === undefined ? {} : { forge: delivery.forge }),
    ...(delivery.api_url === undefined ? {} : { apiUrl: delivery.api_url }),
  };
}

export function secretsOf(body: WireSecrets | undefined): RunSecrets {
  const credentials = body?.repository?.credentials;
  const kubeconfig = body?.kubeconfig;
  return {
    ...(credentials?.token === undefined
      ? {}
      : { repositoryCredentials: { token: credentials.token, ...(credentials.username === undefined ? {} : { username: credentials.username }) } }),
    ...(credentials?.github_app === undefined
      ? {}
      : {
          githubApp: {
            appId: credentials.github_app.app_id,
            installationId: credentials.github_app.installation_id,
            privateKey: credentials.github_app.private_key,
          },
        }),
    ...(kubeconfig?.secretRef !== undefined
      ? { kubeconfig: { kind: 'secretRef' as const, ...kubeconfig.secretRef } }
      : kubeconfig?.inline !== undefined
        ? { kubeconfig: { kind: 'inline' as const, value: kubeconfig.inline } }
        : {}),
    ...(body?.sealing === undefined ? {} : { certificate: body.sealing.certificate }),
    ...(body?.registry_pull_secret === undefined ? {} : { registryDockerconfigjson: body.registry_pull_secret.dockerconfigjson }),
    ...(body?.notifications === undefined ? {} : { notifications: { provider: body.notifications.provider, address: body.notifications.address } }),
    ...(body?.wait_for_ready === true ? { waitForReady: { timeoutSeconds: body.ready_timeout_seconds ?? DEFAULT_READY_TIMEOUT_SECONDS } } : {}),
  };
}

/** A run as the API shows it: snake_case, ISO timestamps, explicit nulls, no credential. */
export function runView(run: RunRecord): z.output<typeof runViewSchema> {
  return {
    id: run.id,
    action: run.action,
    status: run.status,
    step: run.step,
    step_name: run.stepName ?? null,
    message: run.message,
    error_code: run.failure?.code ?? null,
    transient: run.failure?.transient ?? null,
    cluster: { name: run.cluster.name, domain: run.cluster.domain, region: run.cluster.region },
    repository: { url: withoutCredentials(run.repositoryUrl), branch: run.branch },
    reference: run.reference,
    job: run.job,
    gitops_path: run.gitopsPath ?? null,
    commits: run.commits.map((c) => ({ pass: c.pass, sha: c.sha, ...(c.cluster !== undefined ? { cluster: c.cluster } : {}) })),
    batch: run.batch !== undefined ? [...run.batch] : null,
    attempt: run.attempt,
    sealing: run.sealing,
    rotation: run.rotation ?? null,
    changes:
      run.changes === undefined
        ? null
        : {
            added: run.changes.added,
            modified: run.changes.modified,
            removed: run.changes.removed,
            ...(run.changes.credentialsKept !== undefined ? { credentials_kept: run.changes.credentialsKept } : {}),
            ...(run.changes.kept !== undefined ? { kept: [...run.changes.kept] } : {}),
          },
    delivery: {
      mode: run.delivery?.mode ?? 'push',
      auto_merge: run.delivery?.autoMerge ?? false,
      ...(run.delivery?.forge ? { forge: run.delivery.forge } : {}),
      ...(run.delivery?.apiUrl ? { api_url: run.delivery.apiUrl } : {}),
    },
    review_requests: (run.reviewRequests ?? []).map((r) => ({
      pass: r.pass,
      forge: r.forge,
      number: r.number,
      url: r.url,
      state: r.state,
      ...(r.branch === undefined ? {} : { branch: r.branch }),
      updated_at: r.updatedAt.toISOString(),
    })),
    created_by: run.createdBy,
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
  };
}

export function stepView(step: RunStep): z.output<typeof runStepSchema> {
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

export function acceptedView(run: RunRecord): z.output<typeof acceptedSchema> {
  return { id: run.id, job: run.job, status: run.status, attempt: run.attempt };
}

export function dryRunView(request: ScaffoldRequest, result: DryRunResult): z.output<typeof dryRunSchema> {
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
export function withoutCredentials(url: string): string {
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
