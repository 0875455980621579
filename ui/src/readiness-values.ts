/**
 * "Wait until Flux reports Ready" (`wait_for_ready`, `ready_timeout_seconds`)
 * as the start form holds it, what the browser can tell about it, and the
 * request body part it becomes. Pure and import-free, so it is tested under Node.
 */
import type { SealingMode } from './secret-values';

export interface ReadinessValues {
  readonly wait: boolean;
  /** Seconds, as typed; empty: the service's default (900). */
  readonly timeout: string;
}

export const EMPTY_READINESS: ReadinessValues = { wait: false, timeout: '' };

export const READINESS_FIELDS: readonly { readonly id: string; readonly api: readonly string[]; readonly label: string }[] = [
  { id: 'wait-for-ready', api: ['wait_for_ready'], label: 'Wait until Flux reports Ready' },
  { id: 'ready-timeout', api: ['ready_timeout_seconds'], label: 'Ready timeout' },
];

/** The service reads Flux through the kubeconfig: waiting needs one (docs/api.md). */
export function readinessIssues(values: ReadinessValues, mode: SealingMode): Map<string, string> {
  const issues = new Map<string, string>();
  if (!values.wait) return issues;
  if (mode !== 'kubeconfig-inline' && mode !== 'kubeconfig-secret')
    issues.set('wait-for-ready', 'Waiting for Ready reads Flux on the new cluster: give its kubeconfig (above) instead of only the certificate.');
  const timeout = values.timeout.trim();
  if (timeout !== '' && (!/^[0-9]+$/.test(timeout) || Number(timeout) < 10 || Number(timeout) > 7200))
    issues.set('ready-timeout', 'Enter whole seconds from 10 to 7200, or leave it empty for 900.');
  return issues;
}

export function readinessRequest(values: ReadinessValues): { wait_for_ready?: true; ready_timeout_seconds?: number } {
  if (!values.wait) return {};
  const timeout = values.timeout.trim();
  return { wait_for_ready: true, ...(timeout === '' ? {} : { ready_timeout_seconds: Number(timeout) }) };
}
