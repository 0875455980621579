/**
 * Which kubeconfigs a caller may hand the product, and the only form in which
 * one reaches a Kubernetes client. A kubeconfig is more than data:
 * client-node runs `users[].user.exec` commands, calls `auth-provider` plugins
 * and reads `tokenFile`, `client-certificate`, `client-key` and
 * `certificate-authority` from the file system of whatever host loads it, and
 * the service and the runner both load kubeconfigs that callers sent.
 *
 * Rebuild, don't inspect: the text is parsed once as strict YAML (no aliases,
 * anchors, merge keys or custom tags, `strict-yaml.ts`), and a new
 * {@link InlineKubeconfig} is built from an allow-list of fields. Nothing
 * else survives, so a field the checks never looked at cannot reach the
 * loader: the edges hand client-node this object (`loadFromOptions`), never
 * the caller's text. Forbidden fields are refused by name so the caller learns
 * what to send instead; `preferences` and `extensions` (data that kubectl and
 * minikube write) are accepted and dropped.
 */
import type { FieldIssue } from '../errors.js';
import { isRecord } from './is-record.js';
import { isLoopbackHost } from './repository-url.js';
import { parseStrictYaml } from './strict-yaml.js';

/** A cluster entry as the Kubernetes client needs it: a server URL and how to trust it. */
export interface KubeconfigCluster {
  readonly name: string;
  /** https://, or http:// to a loopback address (with skipTLSVerify, as client-node requires). */
  readonly server: string;
  /** certificate-authority-data (base64 PEM). */
  readonly caData?: string;
  readonly tlsServerName?: string;
  readonly skipTLSVerify: boolean;
}

/** A user entry: a bearer token and/or an inline client certificate and key. */
export interface KubeconfigUser {
  readonly name: string;
  readonly token?: string;
  /** client-certificate-data (base64 PEM). */
  readonly certData?: string;
  /** client-key-data (base64 PEM). */
  readonly keyData?: string;
}

export interface KubeconfigContext {
  readonly name: string;
  readonly cluster: string;
  readonly user?: string;
  readonly namespace?: string;
}

/** A kubeconfig rebuilt from inline data only: nothing in it runs a command, reads a file or picks a proxy. */
export interface InlineKubeconfig {
  readonly clusters: readonly KubeconfigCluster[];
  readonly users: readonly KubeconfigUser[];
  readonly contexts: readonly KubeconfigContext[];
  readonly currentContext?: string;
}

/** The rebuilt kubeconfig, or every reason the text is refused. */
export type KubeconfigReading = { readonly ok: true; readonly kubeconfig: InlineKubeconfig } | { readonly ok: false; readonly issues: FieldIssue[] };

/** Top-level keys: the three lists and current-context are rebuilt; the rest is accepted and dropped. */
const DROPPED_TOP_LEVEL = new Set(['apiVersion', 'kind', 'preferences', 'extensions']);

/** Why the usual offenders are refused, so the message tells the caller what to send instead. */
const REASONS: Readonly<Record<string, string>> = {
  exec: 'runs a command on the host; put a token in users[].user.token instead',
  'auth-provider': 'runs an authentication plugin on the host; put a token in users[].user.token instead',
  tokenFile: 'reads a file on the host; put the token itself in users[].user.token',
  'token-file': 'reads a file on the host; put the token itself in users[].user.token',
  'client-certificate': 'reads a file on the host; use client-certificate-data',
  'client-key': 'reads a file on the host; use client-key-data',
  'certificate-authority': 'reads a file on the host; use certificate-authority-data',
  'proxy-url': "sends the traffic through a proxy of the caller's choosing; not supported",
  username: 'is basic authentication, which Kubernetes no longer serves; put a token in users[].user.token',
  password: 'is basic authentication, which Kubernetes no longer serves; put a token in users[].user.token',
};

function reasonFor(key: string): string {
  return REASONS[key] ?? 'is not supported: only inline data (server, certificate-authority-data, token, client-certificate-data, client-key-data) is accepted';
}

/** Builds the typed entries of one list, collecting issues with `field`-relative paths. */
class Rebuild {
  readonly issues: FieldIssue[] = [];
  constructor(private readonly field: string) {}

  issue(message: string): void {
    this.issues.push({ field: this.field, message });
  }

  string(body: Record<string, unknown>, key: string, where: string, required = false): string | undefined {
    const value = body[key];
    if (value === undefined || value === null) {
      if (required) this.issue(`${where}.${key} is missing`);
      return undefined;
    }
    if (typeof value !== 'string' || value === '') {
      this.issue(`${where}.${key} must be a non-empty string`);
      return undefined;
    }
    return value;
  }

  /** The entries of `list` with their body mapping, refusing any key but `name`, the body key and (dropped) extensions. */
  entries(
    root: Record<string, unknown>,
    list: string,
    bodyKey: string,
    allowed: ReadonlySet<string>,
  ): { name: string; body: Record<string, unknown>; where: string }[] {
    const value = root[list];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.issue(`${list} must be a list`);
      return [];
    }
    const seen = new Set<string>();
    const out: { name: string; body: Record<string, unknown>; where: string }[] = [];
    value.forEach((entry: unknown, index) => {
      const where = `${list}[${index}]`;
      if (!isRecord(entry)) return this.issue(`${where} must be a mapping`);
      for (const key of Object.keys(entry)) {
        if (key !== 'name' && key !== bodyKey) this.issue(`${where}.${key} is not a kubeconfig field this service accepts`);
      }
      const name = this.string(entry, 'name', where, true);
      const body = entry[bodyKey];
      if (!isRecord(body)) return this.issue(`${where}.${bodyKey} must be a mapping`);
      for (const key of Object.keys(body)) {
        if (!allowed.has(key) && key !== 'extensions') this.issue(`${where}.${bodyKey}.${key} ${reasonFor(key)}`);
      }
      if (name === undefined) return;
      if (seen.has(name)) return this.issue(`${where}.name "${name}" is used by an earlier entry`);
      seen.add(name);
      out.push({ name, body, where: `${where}.${bodyKey}` });
    });
    return out;
  }

  server(body: Record<string, unknown>, where: string, skipTLSVerify: boolean): string | undefined {
    const server = this.string(body, 'server', where, true);
    if (server === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      this.issue(`${where}.server is not a valid URL`);
      return undefined;
    }
    // file:// and unix:// would point the client at a local socket or file; only the network counts.
    if (url.protocol === 'http:') {
      if (!isLoopbackHost(url.hostname)) {
        this.issue(`${where}.server must be an https:// URL (http:// only to a loopback address)`);
        return undefined;
      }
      // client-node refuses plain http unless TLS verification is explicitly off; say so now, not at the first request.
      if (!skipTLSVerify) {
        this.issue(`${where}.server uses http://, which the client only accepts with insecure-skip-tls-verify: true`);
        return undefined;
      }
    } else if (url.protocol !== 'https:') {
      this.issue(`${where}.server must be an https:// URL (http:// only to a loopback address)`);
      return undefined;
    }
    if (url.username !== '' || url.password !== '') {
      this.issue(`${where}.server must not embed credentials; put a token in users[].user.token`);
      return undefined;
    }
    return server;
  }
}

const CLUSTER_FIELDS = new Set(['server', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name']);
const USER_FIELDS = new Set(['token', 'client-certificate-data', 'client-key-data']);
const CONTEXT_FIELDS = new Set(['cluster', 'user', 'namespace']);

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/**
 * Parses a caller's kubeconfig and rebuilds it from inline data only.
 * `field` names it in every issue (`kubeconfig.inline`, `--kubeconfig`);
 * messages name fields and positions, never values other than entry names.
 */
export function readKubeconfig(text: string, field: string): KubeconfigReading {
  const parsed = parseStrictYaml(text, field);
  if (!parsed.ok) return parsed;
  const root = parsed.value;
  if (!isRecord(root)) return { ok: false, issues: [{ field, message: 'must be a YAML mapping (apiVersion: v1, kind: Config)' }] };
  const rebuild = new Rebuild(field);
  for (const key of Object.keys(root)) {
    if (!DROPPED_TOP_LEVEL.has(key) && !['clusters', 'users', 'contexts', 'current-context'].includes(key))
      rebuild.issue(`${key} is not a kubeconfig field this service accepts`);
  }
  if (root['kind'] !== undefined && root['kind'] !== 'Config') rebuild.issue('kind must be Config');

  const clusters: KubeconfigCluster[] = [];
  for (const { name, body, where } of rebuild.entries(root, 'clusters', 'cluster', CLUSTER_FIELDS)) {
    const skip = body['insecure-skip-tls-verify'];
    if (skip !== undefined && skip !== null && typeof skip !== 'boolean') rebuild.issue(`${where}.insecure-skip-tls-verify must be true or false`);
    const skipTLSVerify = skip === true;
    const server = rebuild.server(body, where, skipTLSVerify);
    const caData = rebuild.string(body, 'certificate-authority-data', where);
    const tlsServerName = rebuild.string(body, 'tls-server-name', where);
    if (server !== undefined) clusters.push({ name, server, skipTLSVerify, ...optional('caData', caData), ...optional('tlsServerName', tlsServerName) });
  }
  const users: KubeconfigUser[] = [];
  for (const { name, body, where } of rebuild.entries(root, 'users', 'user', USER_FIELDS)) {
    const token = rebuild.string(body, 'token', where);
    const certData = rebuild.string(body, 'client-certificate-data', where);
    const keyData = rebuild.string(body, 'client-key-data', where);
    users.push({ name, ...optional('token', token), ...optional('certData', certData), ...optional('keyData', keyData) });
  }
  const contexts: KubeconfigContext[] = [];
  for (const { name, body, where } of rebuild.entries(root, 'contexts', 'context', CONTEXT_FIELDS)) {
    const cluster = rebuild.string(body, 'cluster', where, true);
    const user = rebuild.string(body, 'user', where);
    const namespace = rebuild.string(body, 'namespace', where);
    if (cluster !== undefined) contexts.push({ name, cluster, ...optional('user', user), ...optional('namespace', namespace) });
  }
  const current = root['current-context'];
  if (current !== undefined && current !== null && (typeof current !== 'string' || current === '')) rebuild.issue('current-context must be a non-empty string');
  if (rebuild.issues.length > 0) return { ok: false, issues: rebuild.issues };
  return { ok: true, kubeconfig: { clusters, users, contexts, ...optional('currentContext', typeof current === 'string' ? current : undefined) } };
}

/**
 * The fields of a kubeconfig that would make its loader run a command or read
 * a local file, or that this product does not accept; empty when it rebuilds.
 */
export function kubeconfigIssues(text: string, field: string): FieldIssue[] {
  const reading = readKubeconfig(text, field);
  return reading.ok ? [] : reading.issues;
}

/**
 * The rebuilt kubeconfig as kubeconfig YAML (JSON is YAML), for the places
 * that must hand on text, such as the Secret a runner Job mounts: what is
 * written is what was rebuilt, not what was received.
 */
export function inlineKubeconfigText(kubeconfig: InlineKubeconfig): string {
  const document = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: kubeconfig.clusters.map((c) => ({
      name: c.name,
      cluster: {
        server: c.server,
        ...optional('certificate-authority-data', c.caData),
        ...optional('tls-server-name', c.tlsServerName),
        ...(c.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
      },
    })),
    users: kubeconfig.users.map((u) => ({
      name: u.name,
      user: { ...optional('token', u.token), ...optional('client-certificate-data', u.certData), ...optional('client-key-data', u.keyData) },
    })),
    contexts: kubeconfig.contexts.map((c) => ({
      name: c.name,
      context: { cluster: c.cluster, ...optional('user', c.user), ...optional('namespace', c.namespace) },
    })),
    ...optional('current-context', kubeconfig.currentContext),
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
