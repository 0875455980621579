/**
 * The dashboard's only way to the service: the JSON API under /api/v1, every
 * call with `Authorization: Bearer <token>`. The token is kept in
 * sessionStorage (this tab only, gone when it closes), never in a URL, a
 * cookie or the page.
 */

import type { ReviewRequest, RunDelivery } from './review-requests';
import type { DeliveryBody } from './delivery-values';
import type { KubeconfigSource, RepositoryCredentials, SecretsBody } from './secret-values';
import type { Run, RunDetail, RunStatus } from './run-types';

export type { ReviewRequest, RunDelivery };
export type { Run, RunAction, RunChangesView, RunDetail, RunStatus, RunStep, StepStatus } from './run-types';

const TOKEN_KEY = 'gitops-scaffolder.token';
const API = '/api/v1/scaffolds';

export type FileChange = 'added' | 'modified' | 'removed' | 'unchanged';

export interface DryRunFile {
  readonly path: string;
  readonly change: FileChange;
  readonly content?: string;
  readonly previous_content?: string;
}

export interface DryRunResult {
  readonly dry_run: true;
  readonly cluster: { readonly name: string; readonly domain: string; readonly region: string };
  readonly repository: { readonly url: string; readonly branch: string };
  readonly reference: string;
  readonly gitops_path: string;
  readonly files: readonly DryRunFile[];
}

/** What the dashboard sends to start or preview a scaffold. */
export interface ScaffoldRequestBody {
  readonly cluster: {
    readonly name: string;
    readonly domain: string;
    readonly region: string;
    /** Layer catalog attributes, for a platform that has a catalog. */
    readonly role?: string;
    readonly infra_provider?: string;
    readonly dns_provider?: string;
  };
  readonly repository?: { readonly url?: string; readonly branch?: string; readonly credentials?: RepositoryCredentials };
  /** One of `sealing` or `kubeconfig`. */
  readonly sealing?: { readonly certificate: string };
  readonly kubeconfig?: KubeconfigSource;
  readonly registry_pull_secret?: { readonly dockerconfigjson: string };
  /** After the last push, wait until Flux reports Ready (needs `kubeconfig`); the timeout in seconds, default 900. */
  readonly wait_for_ready?: true;
  readonly ready_timeout_seconds?: number;
  /** Absent: pushed. */
  readonly delivery?: DeliveryBody;
}

export type { KubeconfigSource, RepositoryCredentials } from './secret-values';

/** What a retry sends again: the secrets of the run, which the service never stores. */
export type RetryRequestBody = SecretsBody;

/** A cluster attribute of a platform's layer catalog (`GET /api/v1/catalog`). */
export interface CatalogAttribute {
  readonly name: 'role' | 'infra_provider' | 'dns_provider';
  readonly values: readonly string[];
  readonly default?: string;
}

export interface GraphJson {
  readonly nodes: readonly {
    readonly id: string;
    readonly name: string;
    readonly namespace: string;
    readonly path: string;
    readonly dependsOn: readonly string[];
    readonly healthChecks: readonly { readonly apiVersion?: string; readonly kind: string; readonly name: string; readonly namespace?: string }[];
    readonly wait: boolean;
    /** `spec.suspend: true`: an opt-in layer this cluster has not enabled (waiting, not failed). */
    readonly suspended?: boolean;
  }[];
  readonly order: readonly string[];
  readonly cycles: readonly (readonly string[])[];
}

/** One stored log line, as `GET …/logs?format=json` streams it. */
export interface LogRecord {
  readonly seq: number;
  readonly time: string;
  readonly line: string;
}

/** An error answer of the API: its status and `{error: {code, message, fields}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: readonly { readonly field: string; readonly message: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function getToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Fired on window when the service refuses the token (401): the app shows the login page again. */
export const UNAUTHENTICATED_EVENT = 'gitops-scaffolder:unauthenticated';

async function call(path: string, init: RequestInit = {}, token = getToken()): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token !== null) headers.set('authorization', `Bearer ${token}`);
  const response = await fetch(path, { ...init, headers, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
  if (response.ok) return response;
  let code = 'http_error';
  let message = `the service answered ${response.status}`;
  let fields: { field: string; message: string }[] = [];
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string; fields?: { field: string; message: string }[] } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
    fields = body.error?.fields ?? [];
  } catch {
    // Not JSON (a proxy's page): keep the generic message.
  }
  if (response.status === 401 && token !== null && token === getToken()) {
    clearToken();
    window.dispatchEvent(new Event(UNAUTHENTICATED_EVENT));
  }
  throw new ApiError(response.status, code, message, fields);
}

export async function json<T>(path: string, init?: RequestInit): Promise<T> {
  return (await (await call(path, init)).json()) as T;
}

export const post = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Checks a token before keeping it. @throws ApiError (401 when refused) */
export async function verifyToken(token: string): Promise<void> {
  await call(`${API}?limit=1`, {}, token);
}

export function listRuns(signal?: AbortSignal): Promise<{ items: Run[] }> {
  return json(`${API}?limit=100`, { signal: signal ?? null });
}

export function getRun(id: string, signal?: AbortSignal): Promise<RunDetail> {
  return json(`${API}/${encodeURIComponent(id)}`, { signal: signal ?? null });
}

export function createRun(body: ScaffoldRequestBody): Promise<{ id: string; job: string; status: RunStatus }> {
  return json(API, post(body));
}

/** Cancels an active run. @throws ApiError (409 when it is already final) */
export function cancelRun(id: string): Promise<Run> {
  return json(`${API}/${encodeURIComponent(id)}/cancel`, post({}));
}

/** Retries a failed or cancelled run as a new run; resolves with the new run's id. */
export function retryRun(id: string, body: RetryRequestBody): Promise<{ id: string; job: string; status: RunStatus; attempt: number }> {
  return json(`${API}/${encodeURIComponent(id)}/retry`, post(body));
}

/** The whole log as the runner wrote it (text/plain, one line each), for copying or saving. */
export async function logText(id: string): Promise<string> {
  return (await call(`${API}/${encodeURIComponent(id)}/logs`)).text();
}

export function dryRun(body: ScaffoldRequestBody, signal?: AbortSignal): Promise<DryRunResult> {
  return json(`${API}?dry_run=true`, { ...post(body), signal: signal ?? null });
}

/** The layer catalog of a repository (the default one when `url` is empty) and branch (main when empty). */
export function getCatalog(url: string, branch: string, signal?: AbortSignal): Promise<{ attributes: CatalogAttribute[] }> {
  const query = new URLSearchParams();
  if (url !== '') query.set('repository_url', url);
  if (branch !== '') query.set('branch', branch);
  const search = query.toString();
  return json(`/api/v1/catalog${search === '' ? '' : `?${search}`}`, { signal: signal ?? null });
}

/** The run's Flux graph as an SVG blob (shown through an <img>, where it cannot run anything). */
export async function graphSvg(id: string, signal?: AbortSignal): Promise<Blob> {
  const response = await call(`${API}/${encodeURIComponent(id)}/graph?format=svg`, { signal: signal ?? null });
  const text = await response.text();
  return new Blob([text], { type: 'image/svg+xml' });
}

export function graphJson(id: string, signal?: AbortSignal): Promise<GraphJson> {
  return json(`${API}/${encodeURIComponent(id)}/graph?format=json`, { signal: signal ?? null });
}

/**
 * Follows a run's log: `GET …/logs?follow=true&format=json&after=N`, read as a
 * stream of NDJSON lines. Resolves when the service ends the stream (the run is
 * final) or `signal` aborts.
 */
export async function followLogs(id: string, after: number, onRecord: (record: LogRecord) => void, signal: AbortSignal): Promise<void> {
  const response = await call(`${API}/${encodeURIComponent(id)}/logs?follow=true&format=json&after=${after}`, { signal });
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += value;
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        const text = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (text.trim() !== '') {
          try {
            onRecord(JSON.parse(text) as LogRecord);
          } catch {
            // A torn or foreign line: skip it; the next record carries on.
          }
        }
        newline = pending.indexOf('\n');
      }
    }
  } finally {
    reader.releaseLock();
  }
}
