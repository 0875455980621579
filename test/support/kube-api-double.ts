/**
 * Test support: a protocol-faithful double of the few Kubernetes API endpoints
 * gitops-scaffolder uses, for the real `@kubernetes/client-node` to talk to
 * through a real kubeconfig.
 *
 * Faithful where our code depends on it (https://kubernetes.io/docs/reference/using-api/api-concepts/):
 * - one `resourceVersion` counter shared by every object, like etcd's revision;
 *   lists carry it in `metadata.resourceVersion`, watches resume from it and
 *   answer a compacted one with an `ERROR` event holding a 410 `Expired` Status;
 * - `?watch=true` streams newline-delimited `{"type","object"}` events, starting
 *   with synthetic `ADDED` events when no resourceVersion (or "0") is given, and
 *   turns a MODIFIED that leaves or enters a selector into DELETED / ADDED;
 * - errors are `Status` objects with `reason` NotFound / AlreadyExists / Conflict /
 *   Invalid / BadRequest / Unauthorized / ServiceUnavailable and the real messages
 *   (`jobs.batch "x" not found`);
 * - the service proxy resolves `scheme:name:port` like the apiserver's
 *   `SplitSchemeNamePort` + `serviceProxyDial`: the port segment must be a port
 *   NAME of the Service (a number is mapped to its name; an unnamed port is the
 *   empty segment, kubeseal's trailing colon); otherwise 503 "no endpoints";
 * - deleting a Job garbage-collects its dependents (pods, owned Secrets) unless
 *   the propagation policy is Orphan, which is the REST default for batch/v1 Jobs;
 * - pod logs: `follow=true` stays open until the container terminates; a waiting
 *   container answers 400; `timestamps`, `sinceTime` and `tailLines` work; a
 *   failed container's termination message falls back to the log tail under
 *   `FallbackToLogsOnError`;
 * - TokenReview answers 201 with `status.authenticated`, `user`, and the audiences
 *   intersection, or `authenticated: false` with an `error`;
 * - Flux Kustomizations (kustomize.toolkit.fluxcd.io/v1) can be listed; as for
 *   every custom resource, list items keep their own apiVersion and kind.
 * - SubjectAccessReview answers 201 with the RBAC authorizer's decision
 *   (`status.allowed` and its `reason`) over the (Cluster)Roles and bindings
 *   given to `applyRbac` (see kube-rbac.ts), and 422 Invalid for a spec without
 *   exactly one of resourceAttributes / nonResourceAttributes or without a user or group.
 *
 * Not modelled: controllers (tests drive Job, pod and Deployment status through
 * the control surface), admission, RBAC of the double's own callers (one token
 * may do everything), strategic-merge and JSON patches.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { rbacDecision, type AccessQuestion, type RbacObject } from './kube-rbac.js';

/** Any JSON object. */
export type JsonObject = Record<string, unknown>;

/** One request the double received (the Authorization header is never recorded). */
export interface RecordedRequest {
  readonly method: string;
  /** The path exactly as sent, without the query string (percent-encoding kept). */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType?: string;
  /** The parsed JSON body, when there was one. */
  readonly body?: unknown;
}

/** What a proxied Service endpoint receives. */
export interface ProxyRequest {
  readonly method: string;
  /** The path after `/proxy`, starting with `/`. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingMessage['headers'];
  /** The request's body (JSON, parsed as the double reads every body), when there was one: what a POST to the controller's `/v1/rotate` carries. */
  readonly body?: unknown;
}

/** What a proxied Service endpoint answers. */
export interface ProxyResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/** Stands in for the pods behind a Service port. */
export type ProxyHandler = (request: ProxyRequest) => ProxyResponse | Promise<ProxyResponse>;

/** A pod phase. */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** How a pod of a Job starts out. */
export interface PodForJobOptions {
  /** Lines already in the container's log. */
  readonly logLines?: readonly string[];
  /** @default 'Running' */
  readonly phase?: PodPhase;
  /** The container's termination message, when it has terminated. */
  readonly terminationMessage?: string;
  /** @default 0 for Succeeded, 1 for Failed */
  readonly exitCode?: number;
}

/** What TokenReview says about one token. */
export interface TokenReviewAnswer {
  readonly authenticated: boolean;
  readonly user?: { readonly username: string; readonly uid?: string; readonly groups?: readonly string[] };
  /** The token's own audiences. @default the API server's audiences */
  readonly audiences?: readonly string[];
}

/** A failure to answer instead of the real response, for matching requests. */
export interface InjectedFailure {
  readonly method?: string;
  /** Matched against the request path. */
  readonly path: RegExp;
  readonly code: number;
  /** How many requests to fail. @default 1 */
  readonly times?: number;
}

/** A running double and its control surface. */
export interface KubeApiDouble {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The bearer token every request must carry. */
  readonly token: string;
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[];
  /**
   * Writes a kubeconfig for the double (token user, plain http with
   * `insecure-skip-tls-verify`, which client-node requires for http servers).
   * @returns the file's path
   */
  writeKubeconfig(dir: string, options?: { readonly token?: string; readonly fileName?: string }): Promise<string>;
  /** Creates or replaces a Deployment (`obj` holds at least `spec` and/or `status`). */
  setDeployment(namespace: string, name: string, obj?: JsonObject): void;
  /** Sets the Deployment's `Available` condition (creating a one-replica Deployment if missing); watchers see MODIFIED. */
  setDeploymentAvailable(namespace: string, name: string, available: boolean): void;
  /** Creates or replaces a Service with these ports. */
  setService(
    namespace: string,
    name: string,
    spec: { readonly ports: readonly { readonly name?: string; readonly port: number; readonly targetPort?: number | string }[] },
  ): void;
  /** Puts endpoints behind the Service port named `port` (`''` for an unnamed port). */
  setProxyHandler(namespace: string, service: string, port: string, handler: ProxyHandler): void;
  /** Creates or replaces a Secret from plain-text values. */
  setSecret(namespace: string, name: string, values: Readonly<Record<string, string>>): void;
  /**
   * Creates or replaces a Flux Kustomization (`obj` holds `spec` and/or `status`),
   * the way kustomize-controller would leave it; watchers see ADDED or MODIFIED.
   */
  setKustomization(namespace: string, name: string, obj?: JsonObject): void;
  /** Replaces a Job's status; watchers see MODIFIED. @throws when the Job does not exist */
  setJobStatus(namespace: string, name: string, status: JsonObject): void;
  /** Creates a pod for an existing Job, the way the Job controller would. @returns the pod's name */
  addPodForJob(namespace: string, jobName: string, options?: PodForJobOptions): string;
  /** Appends lines to a pod's log; followers receive them at once. */
  appendPodLog(namespace: string, podName: string, lines: readonly string[]): void;
  /** Moves a pod to a phase; a terminal phase ends its log followers. */
  setPodPhase(namespace: string, podName: string, phase: PodPhase, options?: { readonly terminationMessage?: string; readonly exitCode?: number }): void;
  /** Drops the pod's open `follow` log connections, the way an apiserver or kubelet restart would. */
  interruptPodLogStreams(namespace: string, podName: string): void;
  /** Sets what TokenReview answers for `token` (unknown tokens are not authenticated). */
  setTokenReview(token: string, answer: TokenReviewAnswer): void;
  /**
   * Adds ClusterRoles, ClusterRoleBindings, Roles and RoleBindings (parsed YAML,
   * e.g. the shipped deploy/ manifests) that SubjectAccessReview decides with;
   * an object of the same kind, namespace and name is replaced.
   */
  applyRbac(objects: readonly RbacObject[]): void;
  /** Fails the next matching request(s) with a Status of `code`. */
  injectFailure(failure: InjectedFailure): void;
  /** A stored object, or undefined. `resource` is the plural: deployments, services, jobs, pods, secrets. */
  getObject(resource: Resource, namespace: string, name: string): JsonObject | undefined;
  /** Stored objects of a resource in a namespace. */
  listObjects(resource: Resource, namespace: string): JsonObject[];
  /** Closes every connection (watches and log streams included) and the server. */
  stop(): Promise<void>;
}

/** The resources the double serves. */
export type Resource = 'deployments' | 'services' | 'jobs' | 'pods' | 'secrets' | 'kustomizations';

interface ResourceInfo {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** A custom resource: its list items keep apiVersion and kind (unstructured). */
  readonly custom?: boolean;
}

const RESOURCES: Readonly<Record<Resource, ResourceInfo>> = {
  deployments: { group: 'apps', version: 'v1', kind: 'Deployment' },
  services: { group: '', version: 'v1', kind: 'Service' },
  jobs: { group: 'batch', version: 'v1', kind: 'Job' },
  pods: { group: '', version: 'v1', kind: 'Pod' },
  secrets: { group: '', version: 'v1', kind: 'Secret' },
  kustomizations: { group: 'kustomize.toolkit.fluxcd.io', version: 'v1', kind: 'Kustomization', custom: true },
};

/** Which verbs the double implements per resource (the ones the product uses). */
const VERBS: Readonly<Record<Resource, readonly string[]>> = {
  deployments: ['get', 'list', 'watch'],
  services: ['get', 'list', 'watch'],
  jobs: ['create', 'get', 'list', 'watch', 'delete'],
  pods: ['get', 'list', 'watch'],
  secrets: ['create', 'get', 'list', 'watch', 'delete', 'patch'],
  // What waiting for Flux Ready reads (kubernetes/kube-flux-readiness.ts).
  kustomizations: ['list'],
};

// The apiserver's default --api-audiences on most distributions.
const API_AUDIENCES = ['https://kubernetes.default.svc.cluster.local'];
// How many watch events are kept for resuming; older resourceVersions get 410.
const HISTORY_LIMIT = 1000;
// The kubelet's FallbackToLogsOnError limits: the last 80 lines, at most 2048 bytes.
const FALLBACK_LINES = 80;
const FALLBACK_BYTES = 2048;

interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface StoredEvent {
  readonly rv: number;
  readonly resource: Resource;
  readonly type: EventType;
  readonly object: KubeObject;
  readonly previous?: KubeObject;
}

interface Watcher {
  readonly resource: Resource;
  readonly namespace: string;
  readonly matches: (obj: KubeObject) => boolean;
  readonly res: ServerResponse;
}

interface LogEntry {
  /** RFC3339Nano, as the kubelet writes with `timestamps=true`. */
  readonly time: string;
  readonly line: string;
}

interface PodLog {
  readonly entries: LogEntry[];
  readonly followers: Set<{ res: ServerResponse; timestamps: boolean }>;
}

class HttpError extends Error {
  constructor(readonly status: JsonObject) {
    super(String(status['message']));
  }
}

function statusObject(code: number, reason: string, message: string, details?: JsonObject): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function fail(code: number, message: string, reason = REASONS[code] ?? 'Unknown', details?: JsonObject): never {
  throw new HttpError(statusObject(code, reason, message, details));
}

function qualified(resource: Resource): string {
  const { group } = RESOURCES[resource];
  return group ? `${resource}.${group}` : resource;
}

function notFound(resource: Resource, name: string): never {
  fail(404, `${qualified(resource)} "${name}" not found`, 'NotFound', { name, group: RESOURCES[resource].group, kind: resource });
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The apiserver's timestamp form: RFC3339 in UTC, whole seconds. */
function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// The suffix alphabet of names.SimpleNameGenerator (no vowels, no look-alikes).
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function nameSuffix(): string {
  const bytes = randomBytes(5);
  return Array.from(bytes, (b) => NAME_ALPHABET[b % NAME_ALPHABET.length]).join('');
}

/** Selector terms: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`. */
function parseLabelSelector(text: string | undefined): (labels: Readonly<Record<string, string>>) => boolean {
  if (!text) return () => true;
  const terms: ((labels: Readonly<Record<string, string>>) => boolean)[] = [];
  // Split on commas that are not inside parentheses.
  const parts = text.match(/(?:[^,(]|\([^)]*\))+/g) ?? [];
  for (const raw of parts) {
    const part = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^([^\s!=]+)\s*(==|=|!=)\s*(\S*)$/.exec(part))) {
      const [, key = '', op, value = ''] = m;
      terms.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value);
    } else if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part))) {
      const [, key = '', op, list = ''] = m;
      const values = list.split(',').map((v) => v.trim());
      terms.push(op === 'in' ? (l) => values.includes(l[key] ?? '\0') : (l) => !values.includes(l[key] ?? '\0'));
    } else if ((m = /^!(\S+)$/.exec(part))) {
      const key = m[1] ?? '';
      terms.push((l) => !(key in l));
    } else if (/^\S+$/.test(part)) {
      terms.push((l) => part in l);
    } else {
      fail(400, `unable to parse requirement: ${part}`);
    }
  }
  return (labels) => terms.every((t) => t(labels));
}

/** Field selectors the apiserver supports on every resource: metadata.name and metadata.namespace. */
function parseFieldSelector(text: string | undefined): (obj: KubeObject) => boolean {
  if (!text) return () => true;
  const terms = text.split(',').map((raw) => {
    const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(raw.trim());
    if (!m) fail(400, `invalid selector: '${raw}'; can't understand '${raw}'`);
    const [, field = '', op, value = ''] = m;
    if (field !== 'metadata.name' && field !== 'metadata.namespace') {
      fail(400, `field label not supported: ${field}`);
    }
    return (obj: KubeObject) => {
      const actual = field === 'metadata.name' ? obj.metadata.name : (obj.metadata.namespace ?? '');
      return op === '!=' ? actual !== value : actual === value;
    };
  });
  return (obj) => terms.every((t) => t(obj));
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** RFC3339Nano of "now", strictly increasing so log lines have distinct times. */
function logClock(): () => string {
  let last = 0n;
  return () => {
    let now = BigInt(Date.now()) * 1_000_000n;
    if (now <= last) now = last + 1n;
    last = now;
    const seconds = Number(now / 1_000_000_000n);
    const nanos = (now % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
    return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, nanos ? `.${nanos}Z` : 'Z');
  };
}

/** An RFC3339(Nano) time as epoch nanoseconds, for comparisons. */
function nanosOf(time: string): bigint {
  const m = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(time);
  if (!m) return -1n;
  const seconds = Date.parse(`${m[1] ?? ''}${m[3] ?? ''}`);
  if (Number.isNaN(seconds)) return -1n;
  return BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0') || '0');
}

/** Starts the double on 127.0.0.1 with an ephemeral port. */
export async function startKubeApiDouble(): Promise<KubeApiDouble> {
  const token = `double-${randomBytes(16).toString('hex')}`;
  const requests: RecordedRequest[] = [];
  const objects = new Map<Resource, Map<string, KubeObject>>(Object.keys(RESOURCES).map((r) => [r as Resource, new Map()]));
  const history: StoredEvent[] = [];
  const watchers = new Set<Watcher>();
  const proxyHandlers = new Map<string, ProxyHandler>();
  const podLogs = new Map<string, PodLog>();
  const tokenReviews = new Map<string, TokenReviewAnswer>();
  const rbac: RbacObject[] = [];
  const failures: { failure: InjectedFailure; left: number }[] = [];
  const nextLogTime = logClock();
  let stopped = false;
  let revision = 1000;
  // Events with rv <= compactedRv are gone from history.
  let compactedRv = revision;

  const key = (namespace: string, name: string): string => `${namespace}/${name}`;
  const store = (resource: Resource): Map<string, KubeObject> => objects.get(resource) as Map<string, KubeObject>;

  function typeMeta(resource: Resource): { apiVersion: string; kind: string } {
    const { group, version, kind } = RESOURCES[resource];
    return { apiVersion: group ? `${group}/${version}` : version, kind };
  }

  function send(watcher: Watcher, type: string, object: KubeObject | JsonObject): void {
    watcher.res.write(`${JSON.stringify({ type, object })}\n`);
  }

  function deliver(event: StoredEvent, watcher: Watcher): void {
    if (watcher.resource !== event.resource) return;
    if (watcher.namespace !== event.object.metadata.namespace) return;
    const now = watcher.matches(event.object);
    const before = event.previous !== undefined && watcher.matches(event.previous);
    if (event.type === 'ADDED' && now) send(watcher, 'ADDED', event.object);
    else if (event.type === 'DELETED' && before) send(watcher, 'DELETED', event.object);
    else if (event.type === 'MODIFIED') {
      if (before && now) send(watcher, 'MODIFIED', event.object);
      else if (!before && now) send(watcher, 'ADDED', event.object);
      else if (before && !now) send(watcher, 'DELETED', event.object);
    }
  }

  function record(resource: Resource, type: EventType, object: KubeObject, previous?: KubeObject): void {
    const event: StoredEvent = { rv: revision, resource, type, object: clone(object), ...(previous ? { previous: clone(previous) } : {}) };
    history.push(event);
    while (history.length > HISTORY_LIMIT) compactedRv = (history.shift() as StoredEvent).rv;
    for (const watcher of watchers) deliver(event, watcher);
  }

  /** Writes an object, assigning a new resourceVersion; emits ADDED or MODIFIED. */
  function put(resource: Resource, obj: KubeObject): KubeObject {
    const namespace = obj.metadata.namespace ?? '';
    const previous = store(resource).get(key(namespace, obj.metadata.name));
    revision += 1;
    const stored = clone(obj);
    stored.metadata.resourceVersion = String(revision);
    store(resource).set(key(namespace, stored.metadata.name), stored);
    record(resource, previous ? 'MODIFIED' : 'ADDED', stored, previous);
    return stored;
  }

  /** Removes an object and, unless orphaning, every object it owns (the garbage collector's job). */
  function remove(resource: Resource, namespace: string, name: string, propagation: string): KubeObject | undefined {
    const existing = store(resource).get(key(namespace, name));
    if (!existing) return undefined;
    store(resource).delete(key(namespace, name));
    revision += 1;
    const gone = clone(existing);
    gone.metadata.resourceVersion = String(revision);
    record(resource, 'DELETED', gone, existing);
    for (const dependentResource of Object.keys(RESOURCES) as Resource[]) {
      for (const dependent of [...store(dependentResource).values()]) {
        const refs = dependent.metadata.ownerReferences ?? [];
        if (dependent.metadata.namespace !== namespace || !refs.some((r) => r.uid === existing.metadata.uid)) continue;
        if (propagation === 'Orphan') {
          const orphan = clone(dependent);
          orphan.metadata.ownerReferences = refs.filter((r) => r.uid !== existing.metadata.uid);
          if (orphan.metadata.ownerReferences.length === 0) delete orphan.metadata.ownerReferences;
          put(dependentResource, orphan);
        } else {
          if (dependentResource === 'pods') endFollowers(key(namespace, dependent.metadata.name));
          remove(dependentResource, namespace, dependent.metadata.name, propagation);
        }
      }
    }
    return gone;
  }

  function newMeta(namespace: string, name: string, extra: Partial<ObjectMeta> = {}): ObjectMeta {
    return { ...extra, name, namespace, uid: randomUUID(), resourceVersion: '0', creationTimestamp: timestamp() };
  }

  function endFollowers(podKey: string): void {
    const log = podLogs.get(podKey);
    if (!log) return;
    for (const follower of log.followers) follower.res.end();
    log.followers.clear();
  }

  function writeLogEntry(res: ServerResponse, entry: LogEntry, timestamps: boolean): void {
    res.write(timestamps ? `${entry.time} ${entry.line}\n` : `${entry.line}\n`);
  }

  // ---- request handling -------------------------------------------------------------------

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > 3 * 1024 * 1024) fail(413, 'Request entity too large: limit is 3145728', 'RequestEntityTooLarge');
      chunks.push(chunk as Buffer);
    }
    if (size === 0) return undefined;
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return fail(400, 'the request body is not valid JSON');
    }
  }

  function json(res: ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  function authorized(req: IncomingMessage): boolean {
    return req.headers.authorization === `Bearer ${token}`;
  }

  function takeFailure(method: string, path: string): number | undefined {
    const index = failures.findIndex(({ failure }) => (!failure.method || failure.method === method) && failure.path.test(path));
    if (index < 0) return undefined;
    const entry = failures[index] as (typeof failures)[number];
    entry.left -= 1;
    if (entry.left <= 0) failures.splice(index, 1);
    return entry.failure.code;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double');
    const method = req.method ?? 'GET';
    const query = Object.fromEntries(url.searchParams);
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE' ? await readBody(req) : undefined;
    requests.push({
      method,
      path: url.pathname,
      query,
      ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
      ...(body !== undefined ? { body } : {}),
    });
    if (!authorized(req)) return json(res, 401, statusObject(401, 'Unauthorized', 'Unauthorized'));
    const injected = takeFailure(method, url.pathname);
    if (injected !== undefined) return json(res, injected, statusObject(injected, REASONS[injected] ?? 'Unknown', `injected failure ${injected}`));

    // Path segments, decoded the way the apiserver decodes them.
    const segments = url.pathname
      .split('/')
      .slice(1)
      .map((s) => decodeURIComponent(s));
    const [root, ...rest] = segments;
    if (root === 'apis' && rest[0] === 'authentication.k8s.io' && rest[1] === 'v1' && rest[2] === 'tokenreviews' && rest.length === 3) {
      if (method !== 'POST') fail(405, `the server does not allow this method on the requested resource`);
      return json(res, 201, tokenReview(body));
    }
    if (root === 'apis' && rest[0] === 'authorization.k8s.io' && rest[1] === 'v1' && rest[2] === 'subjectaccessreviews' && rest.length === 3) {
      if (method !== 'POST') fail(405, `the server does not allow this method on the requested resource`);
      return json(res, 201, subjectAccessReview(body));
    }
    let group = '';
    let version: string | undefined;
    let tail: string[];
    if (root === 'api') [version, ...tail] = rest;
    else if (root === 'apis') [group = '', version, ...tail] = rest;
    else return json(res, 404, statusObject(404, 'NotFound', 'the server could not find the requested resource'));
    const [nsWord, namespace, resourceName, name, sub, ...subPath] = tail;
    const resource = resourceName as Resource | undefined;
    if (
      nsWord !== 'namespaces' ||
      !namespace ||
      !resource ||
      !(resource in RESOURCES) ||
      RESOURCES[resource].group !== group ||
      RESOURCES[resource].version !== version
    ) {
      return json(res, 404, statusObject(404, 'NotFound', 'the server could not find the requested resource'));
    }
    if (name === undefined || name === '') return collection(res, method, resource, namespace, query, body);
    if (sub === undefined) return item(res, method, resource, namespace, name, query, body, req.headers['content-type']);
    if (resource === 'services' && sub === 'proxy') return proxy(req, res, namespace, name, subPath, query, body);
    if (resource === 'pods' && sub === 'log' && subPath.length === 0 && method === 'GET') return podLog(res, namespace, name, query);
    return json(res, 404, statusObject(404, 'NotFound', 'the server could not find the requested resource'));
  }

  function allow(resource: Resource, verb: string): void {
    if (!VERBS[resource].includes(verb)) fail(405, `the double does not implement ${verb} on ${resource}`);
  }

  function collection(res: ServerResponse, method: string, resource: Resource, namespace: string, query: Record<string, string>, body: unknown): void {
    if (method === 'POST') {
      allow(resource, 'create');
      return json(res, 201, create(resource, namespace, body));
    }
    if (method !== 'GET') fail(405, 'the server does not allow this method on the requested resource');
    const labels = parseLabelSelector(query['labelSelector']);
    const fields = parseFieldSelector(query['fieldSelector']);
    const matches = (obj: KubeObject): boolean => labels(obj.metadata.labels ?? {}) && fields(obj);
    if (query['watch'] === 'true' || query['watch'] === '1') {
      allow(resource, 'watch');
      return watch(res, resource, namespace, matches, query);
    }
    allow(resource, 'list');
    const items = [...store(resource).values()]
      .filter((o) => o.metadata.namespace === namespace && matches(o))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
      // Items of a typed list carry no apiVersion/kind of their own; a custom resource's do.
      .map(({ apiVersion: _a, kind: _k, ...obj }) => (RESOURCES[resource].custom ? { apiVersion: _a, kind: _k, ...obj } : obj));
    const { apiVersion, kind } = typeMeta(resource);
    return json(res, 200, { kind: `${kind}List`, apiVersion, metadata: { resourceVersion: String(revision) }, items });
  }

  function watch(res: ServerResponse, resource: Resource, namespace: string, matches: (o: KubeObject) => boolean, query: Record<string, string>): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const watcher: Watcher = { resource, namespace, matches, res };
    const from = query['resourceVersion'];
    if (from === undefined || from === '' || from === '0') {
      // "Get State and Start at Most Recent": synthetic ADDED for what exists now.
      for (const obj of store(resource).values()) {
        if (obj.metadata.namespace === namespace && matches(obj)) send(watcher, 'ADDED', obj);
      }
    } else {
      const rv = Number(from);
      if (!Number.isInteger(rv) || rv < compactedRv) {
        send(watcher, 'ERROR', statusObject(410, 'Expired', `too old resource version: ${from} (${compactedRv + 1})`));
        res.end();
        return;
      }
      for (const event of history) if (event.rv > rv) deliver(event, watcher);
    }
    watchers.add(watcher);
    const timeoutSeconds = Number(query['timeoutSeconds'] ?? '0');
    const timer = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
    const close = (): void => {
      if (timer) clearTimeout(timer);
      watchers.delete(watcher);
    };
    // The response's 'close' covers both ends: our own end() and the client going away.
    res.on('close', close);
  }

  function create(resource: Resource, namespace: string, body: unknown): KubeObject {
    const { apiVersion, kind } = typeMeta(resource);
    if (!isObject(body)) fail(400, 'the request body must be a JSON object');
    if (body['kind'] !== undefined && body['kind'] !== kind)
      fail(400, `the kind of the provided object (${String(body['kind'])}) does not match the resource ${resource}`);
    const meta = isObject(body['metadata']) ? (body['metadata'] as Partial<ObjectMeta> & { generateName?: string }) : {};
    if (meta.namespace !== undefined && meta.namespace !== namespace) {
      fail(400, 'the namespace of the provided object does not match the namespace sent on the request');
    }
    let name = meta.name;
    if (!name) {
      if (!meta.generateName) fail(422, `${kind} "" is invalid: metadata.name: Required value: name or generateName is required`, 'Invalid');
      name = `${meta.generateName}${nameSuffix()}`;
    }
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
      fail(
        422,
        `${kind} "${name}" is invalid: metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
        'Invalid',
      );
    }
    if (store(resource).has(key(namespace, name))) {
      fail(409, `${qualified(resource)} "${name}" already exists`, 'AlreadyExists', { name, group: RESOURCES[resource].group, kind: resource });
    }
    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, ...userMeta } = meta;
    const obj: KubeObject = { ...clone(body), apiVersion, kind, metadata: newMeta(namespace, name, userMeta) };
    if (resource === 'secrets') admitSecret(obj);
    if (resource === 'jobs') admitJob(obj);
    return put(resource, obj);
  }

  function admitSecret(obj: KubeObject): void {
    const data: Record<string, string> = isObject(obj['data']) ? { ...(obj['data'] as Record<string, string>) } : {};
    for (const [k, v] of Object.entries(data)) {
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) fail(400, `illegal base64 data for key ${k}`);
    }
    // stringData is write-only: merged into data, never stored.
    if (isObject(obj['stringData'])) {
      for (const [k, v] of Object.entries(obj['stringData'])) data[k] = Buffer.from(String(v)).toString('base64');
      delete obj['stringData'];
    }
    obj['data'] = data;
    obj['type'] ??= 'Opaque';
  }

  function admitJob(obj: KubeObject): void {
    const spec = isObject(obj['spec']) ? (obj['spec'] as JsonObject) : fail(422, `Job "${obj.metadata.name}" is invalid: spec: Required value`, 'Invalid');
    const template = isObject(spec['template']) ? (spec['template'] as JsonObject) : {};
    const podSpec = isObject(template['spec']) ? (template['spec'] as JsonObject) : {};
    const containers = Array.isArray(podSpec['containers']) ? (podSpec['containers'] as JsonObject[]) : [];
    if (containers.length === 0) fail(422, `Job.batch "${obj.metadata.name}" is invalid: spec.template.spec.containers: Required value`, 'Invalid');
    if (podSpec['restartPolicy'] !== 'Never' && podSpec['restartPolicy'] !== 'OnFailure') {
      fail(422, `Job.batch "${obj.metadata.name}" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`, 'Invalid');
    }
    const uid = obj.metadata.uid;
    const name = obj.metadata.name;
    // What the Job's defaulting and the Job controller's selector generation add.
    spec['backoffLimit'] ??= 6;
    spec['completions'] ??= 1;
    spec['parallelism'] ??= 1;
    spec['completionMode'] ??= 'NonIndexed';
    spec['suspend'] ??= false;
    spec['selector'] = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
    const templateMeta = isObject(template['metadata']) ? (template['metadata'] as JsonObject) : {};
    templateMeta['labels'] = {
      ...(isObject(templateMeta['labels']) ? templateMeta['labels'] : {}),
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': name,
      'controller-uid': uid,
      'job-name': name,
    };
    template['metadata'] = templateMeta;
    for (const c of containers) {
      c['terminationMessagePath'] ??= '/dev/termination-log';
      c['terminationMessagePolicy'] ??= 'File';
    }
    obj['status'] = {};
  }

  function item(
    res: ServerResponse,
    method: string,
    resource: Resource,
    namespace: string,
    name: string,
    query: Record<string, string>,
    body: unknown,
    contentType: string | undefined,
  ): void {
    const existing = store(resource).get(key(namespace, name));
    if (method === 'GET') {
      allow(resource, 'get');
      if (!existing) notFound(resource, name);
      return json(res, 200, existing);
    }
    if (method === 'DELETE') {
      allow(resource, 'delete');
      if (!existing) notFound(resource, name);
      const options = isObject(body) ? body : {};
      const propagation =
        query['propagationPolicy'] ??
        (typeof options['propagationPolicy'] === 'string' ? options['propagationPolicy'] : undefined) ??
        // batch/v1 Jobs default to orphaning their pods when deleted through the REST API.
        (resource === 'jobs' ? 'Orphan' : 'Background');
      if (!['Orphan', 'Background', 'Foreground'].includes(propagation)) fail(400, `invalid propagationPolicy: ${propagation}`);
      remove(resource, namespace, name, propagation);
      return json(res, 200, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, group: RESOURCES[resource].group, kind: resource, uid: existing.metadata.uid },
      });
    }
    if (method === 'PATCH') {
      allow(resource, 'patch');
      if (!existing) notFound(resource, name);
      const type = (contentType ?? '').split(';')[0]?.trim();
      if (type !== 'application/merge-patch+json') {
        fail(415, `the double implements only application/merge-patch+json, not ${type ?? 'no content type'}`);
      }
      if (!isObject(body)) fail(400, 'the patch must be a JSON object');
      const patchMeta = isObject(body['metadata']) ? body['metadata'] : {};
      // Optimistic concurrency: a resourceVersion in the patch must be the current one.
      if (typeof patchMeta['resourceVersion'] === 'string' && patchMeta['resourceVersion'] !== existing.metadata.resourceVersion) {
        fail(
          409,
          `Operation cannot be fulfilled on ${qualified(resource)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          'Conflict',
          { name, group: RESOURCES[resource].group, kind: resource },
        );
      }
      const patched = mergePatch(existing, body) as KubeObject;
      // Immutable identity fields survive any patch.
      patched.metadata = { ...patched.metadata, name, namespace, uid: existing.metadata.uid, creationTimestamp: existing.metadata.creationTimestamp };
      for (const ref of patched.metadata.ownerReferences ?? []) {
        if (!ref.apiVersion || !ref.kind || !ref.name || !ref.uid) {
          fail(422, `${RESOURCES[resource].kind} "${name}" is invalid: metadata.ownerReferences: apiVersion, kind, name and uid are required`, 'Invalid');
        }
      }
      if (resource === 'secrets') admitSecret(patched);
      return json(res, 200, put(resource, patched));
    }
    fail(405, 'the server does not allow this method on the requested resource');
  }

  async function proxy(
    req: IncomingMessage,
    res: ServerResponse,
    namespace: string,
    id: string,
    subPath: string[],
    query: Record<string, string>,
    body: unknown,
  ): Promise<void> {
    // utilnet.SplitSchemeNamePort: "name", "name:port" or "scheme:name:port".
    const parts = id.split(':');
    let scheme = '';
    let name = '';
    let port = '';
    if (parts.length === 1) [name = ''] = parts;
    else if (parts.length === 2) [name = '', port = ''] = parts;
    else if (parts.length === 3) [scheme = '', name = '', port = ''] = parts;
    if (parts.length > 3 || !name || !['', 'http', 'https'].includes(scheme)) fail(400, `invalid service request "${id}"`);
    const service = store('services').get(key(namespace, name));
    if (!service) notFound('services', name);
    const ports = ((service['spec'] as JsonObject | undefined)?.['ports'] ?? []) as { name?: string; port: number }[];
    if (/^\d+$/.test(port)) {
      const declared = ports.find((p) => p.port === Number(port));
      if (!declared) fail(503, `no service port ${port} found for service "${name}"`);
      port = declared.name ?? '';
    }
    // Endpoints carry the Service's port names; an unknown name has no endpoint.
    const handler = ports.some((p) => (p.name ?? '') === port) ? proxyHandlers.get(`${namespace}/${name}/${port}`) : undefined;
    if (!handler) fail(503, `no endpoints available for service "${name}"`);
    const answer = await handler({
      method: req.method ?? 'GET',
      path: `/${subPath.join('/')}`,
      query,
      headers: req.headers,
      ...(body !== undefined ? { body } : {}),
    });
    res.writeHead(answer.status, { ...(answer.headers ?? {}) });
    res.end(answer.body);
  }

  function podLog(res: ServerResponse, namespace: string, name: string, query: Record<string, string>): void {
    const pod = store('pods').get(key(namespace, name));
    if (!pod) notFound('pods', name);
    const containers = ((pod['spec'] as JsonObject)['containers'] ?? []) as { name: string }[];
    const container = query['container'] || (containers.length === 1 ? containers[0]?.name : undefined);
    if (!container) fail(400, `a container name must be specified for pod ${name}, choose one of: [${containers.map((c) => c.name).join(' ')}]`);
    if (!containers.some((c) => c.name === container)) fail(400, `container ${container} is not valid for pod ${name}`);
    const phase = (pod['status'] as JsonObject)['phase'];
    if (phase === 'Pending') fail(400, `container "${container}" in pod "${name}" is waiting to start: ContainerCreating`);
    const log = podLogs.get(key(namespace, name)) as PodLog;
    const timestamps = query['timestamps'] === 'true';
    let entries = log.entries;
    if (query['sinceTime']) {
      const since = nanosOf(query['sinceTime']);
      if (since < 0n) fail(400, `invalid sinceTime: ${query['sinceTime']}`);
      entries = entries.filter((e) => nanosOf(e.time) >= since);
    }
    if (query['tailLines']) entries = entries.slice(-Number(query['tailLines']));
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    for (const entry of entries) writeLogEntry(res, entry, timestamps);
    if (query['follow'] === 'true' && phase === 'Running') {
      const follower = { res, timestamps };
      log.followers.add(follower);
      res.on('close', () => log.followers.delete(follower));
      return;
    }
    res.end();
  }

  function subjectAccessReview(body: unknown): JsonObject {
    const spec = isObject(body) && isObject(body['spec']) ? body['spec'] : {};
    const resource = isObject(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined;
    const nonResource = isObject(spec['nonResourceAttributes']) ? spec['nonResourceAttributes'] : undefined;
    const user = typeof spec['user'] === 'string' ? spec['user'] : '';
    const groups = Array.isArray(spec['groups']) ? spec['groups'].filter((g): g is string => typeof g === 'string') : [];
    const invalid = (field: string, message: string): never =>
      fail(422, `SubjectAccessReview.authorization.k8s.io "" is invalid: ${field}: ${message}`, 'Invalid', {
        kind: 'SubjectAccessReview',
        group: 'authorization.k8s.io',
      });
    // The apiserver's ValidateSubjectAccessReviewSpec.
    if ((resource === undefined) === (nonResource === undefined))
      invalid('spec.resourceAttributes', 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified');
    if (user === '' && groups.length === 0) invalid('spec.user', 'Invalid value: "": at least one of user or group must be specified');
    const text = (obj: JsonObject, key: string): string => (typeof obj[key] === 'string' ? obj[key] : '');
    const question: AccessQuestion = {
      user,
      groups,
      ...(resource === undefined
        ? {}
        : {
            resource: {
              namespace: text(resource, 'namespace'),
              verb: text(resource, 'verb'),
              group: text(resource, 'group'),
              resource: text(resource, 'resource'),
              subresource: text(resource, 'subresource'),
              name: text(resource, 'name'),
            },
          }),
      ...(nonResource === undefined ? {} : { nonResource: { path: text(nonResource, 'path'), verb: text(nonResource, 'verb') } }),
    };
    const answer = rbacDecision(rbac, question);
    return {
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec,
      status: { allowed: answer.allowed, ...(answer.reason === undefined ? {} : { reason: answer.reason }) },
    };
  }

  function tokenReview(body: unknown): JsonObject {
    const spec = isObject(body) && isObject(body['spec']) ? body['spec'] : {};
    const reviewed = typeof spec['token'] === 'string' ? spec['token'] : '';
    if (!reviewed) fail(400, 'token is required for TokenReview in authentication');
    const wanted = Array.isArray(spec['audiences']) && spec['audiences'].length > 0 ? (spec['audiences'] as string[]) : API_AUDIENCES;
    const answer = tokenReviews.get(reviewed);
    const review = { kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: null }, spec };
    if (!answer?.authenticated) return { ...review, status: { user: {}, error: '[invalid bearer token, square/go-jose: error in cryptographic primitive]' } };
    const tokenAudiences = answer.audiences ?? API_AUDIENCES;
    const common = wanted.filter((a) => tokenAudiences.includes(a));
    if (common.length === 0) {
      return {
        ...review,
        status: {
          user: {},
          error: `[invalid bearer token, token audiences ${JSON.stringify(tokenAudiences)} is invalid for the target audiences ${JSON.stringify(wanted)}]`,
        },
      };
    }
    const user = answer.user ?? { username: 'system:anonymous' };
    return {
      ...review,
      status: {
        authenticated: true,
        user: { username: user.username, uid: user.uid ?? randomUUID(), groups: [...(user.groups ?? [])] },
        audiences: common,
      },
    };
  }

  // ---- server -------------------------------------------------------------------------------

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpError) json(res, Number(error.status['code']), error.status);
      else json(res, 500, statusObject(500, 'InternalError', `double: ${error instanceof Error ? error.message : String(error)}`));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  function requireObject(resource: Resource, namespace: string, name: string): KubeObject {
    const obj = store(resource).get(key(namespace, name));
    if (!obj) throw new Error(`double: ${qualified(resource)} ${namespace}/${name} does not exist`);
    return obj;
  }

  function podStatus(pod: KubeObject, phase: PodPhase, options: { terminationMessage?: string; exitCode?: number }): JsonObject {
    const previous = (pod['status'] ?? {}) as JsonObject;
    const containers = ((pod['spec'] as JsonObject)['containers'] ?? []) as JsonObject[];
    const startedAt = (previous['startTime'] as string | undefined) ?? timestamp();
    const log = podLogs.get(key(pod.metadata.namespace ?? '', pod.metadata.name));
    const containerStatuses = containers.map((c) => {
      let state: JsonObject;
      if (phase === 'Pending') state = { waiting: { reason: 'ContainerCreating' } };
      else if (phase === 'Running') state = { running: { startedAt } };
      else {
        const exitCode = options.exitCode ?? (phase === 'Succeeded' ? 0 : 1);
        let message = options.terminationMessage;
        if (message === undefined && exitCode !== 0 && c['terminationMessagePolicy'] === 'FallbackToLogsOnError' && log) {
          message = Buffer.from(
            log.entries
              .slice(-FALLBACK_LINES)
              .map((e) => e.line)
              .join('\n'),
          )
            .subarray(-FALLBACK_BYTES)
            .toString('utf8');
        }
        state = {
          terminated: {
            exitCode,
            reason: exitCode === 0 ? 'Completed' : 'Error',
            ...(message !== undefined && message !== '' ? { message } : {}),
            startedAt,
            finishedAt: timestamp(),
            containerID: `containerd://${randomBytes(32).toString('hex')}`,
          },
        };
      }
      return {
        name: c['name'],
        image: c['image'],
        imageID: '',
        ready: phase === 'Running',
        started: phase === 'Running',
        restartCount: 0,
        state,
      };
    });
    return { phase, ...(phase === 'Pending' ? {} : { startTime: startedAt }), containerStatuses };
  }

  const double: KubeApiDouble = {
    url,
    token,
    requests,

    async writeKubeconfig(dir, options = {}) {
      const file = join(dir, options.fileName ?? 'kubeconfig');
      const config = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'kube-api-double', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'double-user', user: { token: options.token ?? token } }],
        contexts: [{ name: 'kube-api-double', context: { cluster: 'kube-api-double', user: 'double-user', namespace: 'default' } }],
        'current-context': 'kube-api-double',
      };
      await writeFile(file, stringify(config), { mode: 0o600 });
      return file;
    },

    setDeployment(namespace, name, obj = {}) {
      const existing = store('deployments').get(key(namespace, name));
      const metadata = existing ? existing.metadata : newMeta(namespace, name, { generation: 1 });
      put('deployments', {
        ...typeMeta('deployments'),
        spec: { replicas: 1, selector: { matchLabels: { app: name } } },
        status: {},
        ...clone(obj),
        metadata: { ...metadata, ...(isObject(obj['metadata']) ? obj['metadata'] : {}), name, namespace },
      });
    },

    setDeploymentAvailable(namespace, name, available) {
      if (!store('deployments').has(key(namespace, name))) double.setDeployment(namespace, name);
      const deployment = clone(requireObject('deployments', namespace, name));
      const replicas = Number((deployment['spec'] as JsonObject | undefined)?.['replicas'] ?? 1);
      const now = timestamp();
      deployment['status'] = {
        observedGeneration: deployment.metadata['generation'] ?? 1,
        replicas,
        updatedReplicas: replicas,
        ...(available ? { readyReplicas: replicas, availableReplicas: replicas } : { unavailableReplicas: replicas }),
        conditions: [
          available
            ? {
                type: 'Available',
                status: 'True',
                lastUpdateTime: now,
                lastTransitionTime: now,
                reason: 'MinimumReplicasAvailable',
                message: 'Deployment has minimum availability.',
              }
            : {
                type: 'Available',
                status: 'False',
                lastUpdateTime: now,
                lastTransitionTime: now,
                reason: 'MinimumReplicasUnavailable',
                message: 'Deployment does not have minimum availability.',
              },
          {
            type: 'Progressing',
            status: 'True',
            lastUpdateTime: now,
            lastTransitionTime: now,
            reason: available ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated',
            message: `ReplicaSet "${name}-5d4f8c9b7" ${available ? 'has successfully progressed' : 'is progressing'}.`,
          },
        ],
      };
      put('deployments', deployment);
    },

    setService(namespace, name, spec) {
      const existing = store('services').get(key(namespace, name));
      put('services', {
        ...typeMeta('services'),
        metadata: existing ? existing.metadata : newMeta(namespace, name),
        spec: {
          type: 'ClusterIP',
          clusterIP: `10.96.${randomBytes(1)[0]}.${randomBytes(1)[0]}`,
          ports: spec.ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), protocol: 'TCP', port: p.port, targetPort: p.targetPort ?? p.port })),
          selector: { app: name },
        },
        status: { loadBalancer: {} },
      });
    },

    setProxyHandler(namespace, service, port, handler) {
      proxyHandlers.set(`${namespace}/${service}/${port}`, handler);
    },

    setSecret(namespace, name, values) {
      const existing = store('secrets').get(key(namespace, name));
      put('secrets', {
        ...typeMeta('secrets'),
        metadata: existing ? existing.metadata : newMeta(namespace, name),
        type: 'Opaque',
        data: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      });
    },

    setKustomization(namespace, name, obj = {}) {
      const existing = store('kustomizations').get(key(namespace, name));
      put('kustomizations', {
        ...typeMeta('kustomizations'),
        spec: { interval: '10m', path: './', prune: true, sourceRef: { kind: 'GitRepository', name: 'flux-system' } },
        status: {},
        ...clone(obj),
        metadata: { ...(existing ? existing.metadata : newMeta(namespace, name, { generation: 1 })), name, namespace },
      });
    },

    setJobStatus(namespace, name, status) {
      const job = clone(requireObject('jobs', namespace, name));
      job['status'] = clone(status);
      put('jobs', job);
    },

    addPodForJob(namespace, jobName, options = {}) {
      const job = requireObject('jobs', namespace, jobName);
      const template = ((job['spec'] as JsonObject)['template'] ?? {}) as JsonObject;
      const templateMeta = (template['metadata'] ?? {}) as JsonObject;
      const podName = `${jobName}-${nameSuffix()}`;
      const pod: KubeObject = {
        ...typeMeta('pods'),
        metadata: newMeta(namespace, podName, {
          generateName: `${jobName}-`,
          labels: { ...((templateMeta['labels'] ?? {}) as Record<string, string>) },
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: jobName, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true }],
        }),
        spec: { ...clone((template['spec'] ?? {}) as JsonObject), nodeName: 'double-node' },
        status: {},
      };
      podLogs.set(key(namespace, podName), { entries: (options.logLines ?? []).map((line) => ({ time: nextLogTime(), line })), followers: new Set() });
      pod['status'] = podStatus(pod, options.phase ?? 'Running', options);
      put('pods', pod);
      return podName;
    },

    appendPodLog(namespace, podName, lines) {
      requireObject('pods', namespace, podName);
      const log = podLogs.get(key(namespace, podName)) as PodLog;
      for (const line of lines) {
        const entry = { time: nextLogTime(), line };
        log.entries.push(entry);
        for (const follower of log.followers) writeLogEntry(follower.res, entry, follower.timestamps);
      }
    },

    setPodPhase(namespace, podName, phase, options = {}) {
      const pod = clone(requireObject('pods', namespace, podName));
      pod['status'] = podStatus(pod, phase, options);
      put('pods', pod);
      // The kubelet closes a follow stream when the container exits.
      if (phase === 'Succeeded' || phase === 'Failed') endFollowers(key(namespace, podName));
    },

    interruptPodLogStreams(namespace, podName) {
      endFollowers(key(namespace, podName));
    },

    setTokenReview(reviewed, answer) {
      tokenReviews.set(reviewed, answer);
    },

    applyRbac(objects) {
      for (const object of objects) {
        const same = rbac.findIndex(
          (o) => o.kind === object.kind && o.metadata.name === object.metadata.name && o.metadata.namespace === object.metadata.namespace,
        );
        if (same >= 0) rbac.splice(same, 1);
        rbac.push(object);
      }
    },

    injectFailure(failure) {
      failures.push({ failure, left: failure.times ?? 1 });
    },

    getObject(resource, namespace, name) {
      const obj = store(resource).get(key(namespace, name));
      return obj ? clone(obj) : undefined;
    },

    listObjects(resource, namespace) {
      return [...store(resource).values()].filter((o) => o.metadata.namespace === namespace).map((o) => clone(o));
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      for (const watcher of watchers) watcher.res.end();
      watchers.clear();
      for (const log of podLogs.values()) {
        for (const follower of log.followers) follower.res.end();
        log.followers.clear();
      }
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return double;
}
