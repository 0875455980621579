/**
 * Loading a client-node `KubeConfig`, with validation errors that say what is
 * wrong without repeating what the file holds: a kubeconfig carries bearer
 * tokens and client keys, and parser errors quote the offending line.
 *
 * Every kubeconfig, file or inline, is rebuilt by `model/kubeconfig-policy.ts`
 * first, and only the rebuilt object reaches client-node (`loadFromOptions`):
 * the runner and the service load kubeconfigs that callers sent, and an
 * `exec`, an auth provider or a file path would act on their host. Caller text
 * never goes to `loadFromString`, whose js-yaml resolves aliases and merge keys
 * the policy would otherwise have to model.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ValidationError } from '../errors.js';
import { readKubeconfig, type InlineKubeconfig } from '../model/kubeconfig-policy.js';

/** Where a kubeconfig comes from. */
export type KubeConfigSource =
  /** A kubeconfig file; like inline text, it may hold inline data only (no paths, no exec). */
  | { readonly kind: 'file'; readonly path: string }
  /** Kubeconfig YAML (or JSON) text, e.g. from a Secret or a request. */
  | { readonly kind: 'inline'; readonly yaml: string }
  /** A kubeconfig the policy already rebuilt at the edge that received it; `label` names it in messages. */
  | { readonly kind: 'rebuilt'; readonly kubeconfig: InlineKubeconfig; readonly label: string }
  /** The pod's own ServiceAccount (KUBERNETES_SERVICE_HOST and the mounted token). */
  | { readonly kind: 'in-cluster' };

/**
 * Checks the parts the client needs: a current context whose cluster and user
 * are defined (the policy already checked each server URL). Only names go into messages.
 */
function checkReach(kubeconfig: InlineKubeconfig, label: string): void {
  const current = kubeconfig.currentContext;
  if (current === undefined) throw new ValidationError(`${label}: current-context is not set`);
  const context = kubeconfig.contexts.find((c) => c.name === current);
  if (context === undefined) throw new ValidationError(`${label}: current-context "${current}" names no context`);
  if (!kubeconfig.clusters.some((c) => c.name === context.cluster)) {
    throw new ValidationError(`${label}: context "${current}" names cluster "${context.cluster}", which is not defined`);
  }
  if (context.user !== undefined && !kubeconfig.users.some((u) => u.name === context.user)) {
    throw new ValidationError(`${label}: context "${current}" names user "${context.user}", which is not defined`);
  }
}

/**
 * Hands client-node a fresh copy of the rebuilt kubeconfig, field by field: the
 * objects it keeps have exactly the fields named here, whatever the input held.
 */
function fromRebuilt(kubeconfig: InlineKubeconfig, label: string): KubeConfig {
  checkReach(kubeconfig, label);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: kubeconfig.clusters.map((c) => ({
      name: c.name,
      // As loadFromString does: the client appends paths to the server URL.
      server: c.server.replace(/\/$/, ''),
      skipTLSVerify: c.skipTLSVerify,
      ...(c.caData !== undefined ? { caData: c.caData } : {}),
      ...(c.tlsServerName !== undefined ? { tlsServerName: c.tlsServerName } : {}),
    })),
    users: kubeconfig.users.map((u) => ({
      name: u.name,
      ...(u.token !== undefined ? { token: u.token } : {}),
      ...(u.certData !== undefined ? { certData: u.certData } : {}),
      ...(u.keyData !== undefined ? { keyData: u.keyData } : {}),
    })),
    contexts: kubeconfig.contexts.map((c) => ({
      name: c.name,
      cluster: c.cluster,
      // client-node's type wants a user; its own loader leaves it undefined when the context names none.
      user: c.user as string,
      ...(c.namespace !== undefined ? { namespace: c.namespace } : {}),
    })),
    currentContext: kubeconfig.currentContext as string,
  });
  return kc;
}

function fromText(text: string, label: string): KubeConfig {
  const reading = readKubeconfig(text, label);
  if (!reading.ok) throw new ValidationError(reading.issues);
  return fromRebuilt(reading.kubeconfig, label);
}

/**
 * Loads a kubeconfig and checks that its current context can reach a server.
 *
 * @throws ValidationError naming the problem (file unreadable, YAML malformed,
 *   missing context / cluster / user, http without insecure-skip-tls-verify);
 *   the message never contains the file's content
 */
export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  switch (source.kind) {
    case 'file': {
      const path = resolve(source.path);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (cause) {
        const code = (cause as NodeJS.ErrnoException).code ?? 'error';
        throw new ValidationError(`kubeconfig ${source.path}: cannot be read (${code})`, { cause });
      }
      return fromText(text, `kubeconfig ${source.path}`);
    }
    case 'inline':
      return fromText(source.yaml, 'kubeconfig');
    case 'rebuilt':
      return fromRebuilt(source.kubeconfig, source.label);
    case 'in-cluster': {
      const kc = new KubeConfig();
      kc.loadFromCluster();
      const cluster = kc.getCurrentCluster();
      // loadFromCluster fills in "https://undefined:undefined" outside a pod.
      if (!cluster || cluster.server.includes('undefined')) {
        throw new ValidationError('kubeconfig: not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set)');
      }
      return kc;
    }
  }
}
