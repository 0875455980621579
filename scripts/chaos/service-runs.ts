/**
 * Runs started through a real service process (`serve`, local executor, real
 * scaffold-runners pushing to a bare remote), and the invariants the trials
 * that fault the service or its database check on them: every run ended; a
 * succeeded run has its whole step timeline and every line its runner wrote
 * (its output file, which outlives the service) stored once, in order; the
 * branch holds exactly what the runs report; no generated password is
 * anywhere in plaintext.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { eventually, sealedSecretsIn, secretNeedles, treeAt, unsealAll } from '../../test/support/runner.js';
import type { ServiceProcess } from '../../test/support/service-process.js';
import { allGitObjects, doubledRuns, lostPushes, misreportedRuns, needlesIn, nonLinearHistory, stuckRuns, type RecordedRun } from './invariants.js';
import { invariant, type InvariantResult } from './report.js';

export const API_TOKEN = 'chaos-service-token-0123456789';

/** The service's environment for `dataDir`, pushing to `remote`; on PGlite unless `databaseUrl`. */
export function serviceEnv(dataDir: string, remote: string, databaseUrl?: string): Record<string, string> {
  return {
    API_TOKENS: API_TOKEN,
    AUTH_MODE: 'static',
    EXECUTOR: 'local',
    DATA_DIR: dataDir,
    DEFAULT_GITOPS_REPO_URL: `file://${remote}`,
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
  };
}

/** A run as the API shows it. */
export interface RunView {
  id: string;
  status: string;
  message: string;
  attempt?: number;
  cluster: { name: string };
  commits: { pass: string; sha: string }[];
  steps: { step: number; name: string; status: string }[];
}

export async function api<T>(service: ServiceProcess, path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${service.address}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${text}`);
  return (
    path.includes('format=json')
      ? text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as unknown)
      : JSON.parse(text)
  ) as T;
}

/** Starts `count` scaffold runs of clusters `<prefix>-<i>`; their ids. */
export async function startRuns(service: ServiceProcess, prefix: string, count: number, certificatePem: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const cluster = { name: `${prefix}-${i}`, domain: `${prefix}-${i}.example.net`, region: 'eu-west-1' };
    ids.push(
      (await api<{ id: string }>(service, '/api/v1/scaffolds', { method: 'POST', body: JSON.stringify({ cluster, sealing: { certificate: certificatePem } }) }))
        .id,
    );
  }
  return ids;
}

/** The runs once every one ended, or as they are when `timeoutMs` ran out (a stuck run is an invariant's business, not an error). */
export async function awaitRuns(service: ServiceProcess, ids: readonly string[], timeoutMs: number): Promise<RunView[]> {
  const all = () => Promise.all(ids.map((id) => api<RunView>(service, `/api/v1/scaffolds/${id}`)));
  return eventually(
    'every run to end',
    async () => {
      const views = await all().catch(() => undefined);
      return views?.every((v) => v.status !== 'pending' && v.status !== 'running') ? views : undefined;
    },
    timeoutMs,
    1_000,
  ).catch(all);
}

/** What the invariants read. */
export interface ServiceRunsEvidence {
  readonly service: ServiceProcess;
  /** The service log of every service process of the trial (a killed one's too). */
  readonly serviceLogs: readonly string[];
  readonly dataDir: string;
  readonly remote: string;
  readonly views: readonly RunView[];
  readonly privateKey: KeyObject;
  /** The stored data as text (a dump, or the database files' bytes). */
  readonly database: string;
}

export async function serviceRunInvariants(evidence: ServiceRunsEvidence): Promise<InvariantResult[]> {
  const { service, dataDir, remote, views } = evidence;
  const runs: RecordedRun[] = views.map((v) => ({ id: v.id, cluster: v.cluster.name, attempt: v.attempt ?? 1, status: v.status, commits: v.commits }));
  const timelines: string[] = [];
  const logs: string[] = [];
  const outputs = new Map<string, string>();
  let lines = 0;
  for (const view of views) {
    const output = await readFile(join(dataDir, 'runs', view.id, 'output.log'), 'utf8').catch(() => '');
    outputs.set(view.id, output);
    if (view.status !== 'succeeded') continue;
    const open = view.steps.filter((s) => s.status !== 'succeeded' && s.status !== 'skipped');
    if (open.length > 0 || view.steps.length === 0)
      timelines.push(`${view.id}: steps ${open.map((s) => `${s.step} ${s.name} ${s.status}`).join(', ') || 'none recorded'}`);
    const stored = await api<{ seq: number; line: string }[]>(service, `/api/v1/scaffolds/${view.id}/logs?format=json`);
    const written = output.split('\n').filter((line) => line !== '');
    lines += written.length;
    const seqGap = stored.findIndex((l, i) => l.seq !== i + 1);
    const differs = written.findIndex((line, i) => stored[i]?.line !== line);
    if (seqGap !== -1) logs.push(`${view.id}: seq ${stored[seqGap]?.seq} at position ${seqGap + 1}`);
    else if (differs !== -1 || stored.length !== written.length)
      logs.push(
        `${view.id}: ${stored.length} lines stored, ${written.length} written; first difference at line ${differs === -1 ? Math.min(stored.length, written.length) + 1 : differs + 1}`,
      );
  }
  const succeeded = views.filter((v) => v.status === 'succeeded').length;

  // The generated values, read back from what the runs pushed (their clusters' directories) with the sealing key's private half.
  const values = new Map<string, string>();
  for (const view of views) {
    for (const [key, value] of unsealAll(sealedSecretsIn(await treeAt(remote, 'main', `clusters/${view.cluster.name}`)), evidence.privateKey))
      values.set(`${view.cluster.name}/${key}`, value);
  }
  const needles = secretNeedles(values);
  const plaintext = [
    ...(needles.length === 0 ? ['no SealedSecret value found on main to look for'] : []),
    ...needlesIn(await allGitObjects(remote), needles, 'a git object'),
    ...[...outputs].flatMap(([id, output]) => needlesIn(output, needles, `runner output of ${id}`)),
    ...evidence.serviceLogs.flatMap((log) => needlesIn(log, needles, 'the service log')),
    ...needlesIn(evidence.database, needles, 'the database'),
  ];
  return [
    invariant('no stuck run', stuckRuns(runs), `${runs.length} runs ended, ${succeeded} succeeded`),
    invariant('full step timeline', timelines, `${succeeded} succeeded runs: every step succeeded or skipped`),
    invariant('every log line stored', logs, `${lines} lines the runners wrote = stored, in order, seq without a gap`),
    invariant('no doubled run', await doubledRuns(remote, 'main', runs), 'no pass landed twice'),
    invariant('nothing pushed lost', await lostPushes(remote, 'main', runs), `${succeeded} succeeded runs' commits on main`),
    invariant('linear history', await nonLinearHistory(remote, 'main'), 'no merge commit'),
    invariant('reports = branch', await misreportedRuns(remote, 'main', runs), 'each run reports exactly its commits on main'),
    invariant(
      'no plaintext',
      plaintext,
      `${values.size} generated values (${needles.length} needles) absent from all git objects (unreachable too), runner output, service log, database`,
    ),
  ];
}
