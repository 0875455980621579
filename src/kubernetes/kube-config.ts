/**
 * Loading a client-node `KubeConfig`, with validation errors that say what is
 * wrong without repeating what the file holds: a kubeconfig carries bearer
 * tokens, client keys and passwords, and parser errors quote the offending line.
 * Every kubeconfig, file or inline, passes the inline-data-only policy
 * (`model/kubeconfig-policy.ts`) first: the runner loads kubeconfigs that
 * callers sent, and an `exec` or a file path would act on the runner's host.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import { ValidationError } from '../errors.js';
import { kubeconfigIssues } from '../model/kubeconfig-policy.js';
import { isRecord } from '../model/is-record.js';

/** Where a kubeconfig comes from. */
export type KubeConfigSource =
  /** A kubeconfig file; like inline text, it may hold inline data only (no paths, no exec). */
  | { readonly kind: 'file'; readonly path: string }
  /** Kubeconfig YAML (or JSON) text, e.g. from a Secret or a request. */
  | { readonly kind: 'inline'; readonly yaml: string }
  /** The pod's own ServiceAccount (KUBERNETES_SERVICE_HOST and the mounted token). */
  | { readonly kind: 'in-cluster' };

type Named = { readonly name?: unknown };

function entries(doc: Record<string, unknown>, list: string, label: string): Named[] {
  const value = doc[list];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ValidationError(`${label}: "${list}" must be a list`);
  return value.map((entry, i) => {
    if (!isRecord(entry)) throw new ValidationError(`${label}: ${list}[${i}] must be a mapping`);
    return entry;
  });
}

function find(list: Named[], name: string): Record<string, unknown> | undefined {
  return list.find((e) => e.name === name) as Record<string, unknown> | undefined;
}

/**
 * Checks the parts the client needs: a current context whose cluster has a
 * server URL and whose user exists. Only names and URLs go into messages.
 */
function validate(text: string, label: string): void {
  // Before anything reads it: a kubeconfig that runs commands or reads local files never reaches the loader.
  const refused = kubeconfigIssues(text, label);
  if (refused.length > 0) throw new ValidationError(refused);
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) {
    // The parser's message quotes the source line, which may be a token: report the position only.
    const first = doc.errors[0];
    const where = first?.linePos?.[0] ? ` at line ${first.linePos[0].line}, column ${first.linePos[0].col}` : '';
    throw new ValidationError(`${label}: not valid YAML${where}`);
  }
  const root: unknown = doc.toJS();
  if (!isRecord(root)) throw new ValidationError(`${label}: must be a YAML mapping (apiVersion: v1, kind: Config)`);
  if (root['kind'] !== undefined && root['kind'] !== 'Config') {
    throw new ValidationError(`${label}: kind must be Config`);
  }
  const clusters = entries(root, 'clusters', label);
  const users = entries(root, 'users', label);
  const contexts = entries(root, 'contexts', label);
  const current = root['current-context'];
  if (typeof current !== 'string' || current === '') {
    throw new ValidationError(`${label}: current-context is not set`);
  }
  const context = find(contexts, current);
  if (!context || !isRecord(context['context'])) {
    throw new ValidationError(`${label}: current-context "${current}" names no context`);
  }
  const { cluster: clusterName, user: userName } = context['context'];
  const cluster = typeof clusterName === 'string' ? find(clusters, clusterName) : undefined;
  if (!cluster || !isRecord(cluster['cluster'])) {
    throw new ValidationError(`${label}: context "${current}" names cluster "${String(clusterName)}", which is not defined`);
  }
  const server = cluster['cluster']['server'];
  let url: URL;
  try {
    url = new URL(typeof server === 'string' ? server : '');
  } catch {
    throw new ValidationError(`${label}: cluster "${clusterName as string}" has no valid server URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ValidationError(`${label}: cluster "${clusterName as string}" server must be an http(s) URL`);
  }
  // client-node refuses plain http unless TLS verification is explicitly off; say so now, not at the first request.
  if (url.protocol === 'http:' && cluster['cluster']['insecure-skip-tls-verify'] !== true) {
    throw new ValidationError(`${label}: cluster "${clusterName as string}" uses http://, which the client only accepts with insecure-skip-tls-verify: true`);
  }
  if (userName !== undefined && (typeof userName !== 'string' || !find(users, userName))) {
    throw new ValidationError(`${label}: context "${current}" names user "${String(userName)}", which is not defined`);
  }
}

function fromText(text: string, label: string): KubeConfig {
  validate(text, label);
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (cause) {
    // client-node's own messages name only list indices and fields (`users[0].name is missing`);
    // a js-yaml error would quote the text, so that one is replaced.
    const message = cause instanceof Error && /^(clusters|users|contexts)\[\d+\]/.test(cause.message) ? cause.message : 'cannot be loaded';
    throw new ValidationError(`${label}: ${message}`);
  }
  return kc;
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
