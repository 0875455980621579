/**
 * Whether a Flux Kustomization (kustomize.toolkit.fluxcd.io/v1) has applied a
 * given commit and is Ready, read from its status the way `flux get
 * kustomizations` does. Pure: the object comes from whoever listed it.
 *
 * kustomize-controller records the source artifact's revision as
 * `<ref>@sha1:<commit>` (e.g. `main@sha1:a1afe267…`, Flux ≥ 2.0), and the
 * Ready condition's reason says why it is not Ready: `BuildFailed`,
 * `ReconciliationFailed` (apply), `PruneFailed` and the older
 * `ValidationFailed` do not go away without a new commit, while
 * `HealthCheckFailed`, `DependencyNotReady`, `ArtifactFailed` and `Progressing`
 * can still turn Ready on a later retry.
 * https://fluxcd.io/flux/components/kustomize/kustomizations/#kustomization-status
 */
import { OPTIONAL_LAYER_ANNOTATION } from './optional-layers.js';

/** Where a Kustomization stands with respect to one commit. */
export type KustomizationPhase = 'ready' | 'progressing' | 'failed';

/** One Kustomization's state, as reported to a user. */
export interface KustomizationReadiness {
  readonly namespace: string;
  readonly name: string;
  readonly phase: KustomizationPhase;
  /** One line: the Ready condition and the revision, e.g. `Ready=False (BuildFailed: …), applied main@sha1:…`. */
  readonly summary: string;
  readonly lastAppliedRevision?: string;
  /** The Ready condition's status (`True`, `False`, `Unknown`); absent before the controller wrote one. */
  readonly ready?: string;
  /** The Ready condition's reason (e.g. `ReconciliationSucceeded`, `BuildFailed`), for a reader that shows it on its own. */
  readonly reason?: string;
}

/** The GitRepository (or other source) a Kustomization applies. */
export interface SourceRef {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

interface Condition {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly message?: unknown;
}

/** The fields read here; both typed models and raw JSON have them. */
export interface KustomizationLike {
  readonly metadata?: { readonly name?: unknown; readonly namespace?: unknown; readonly generation?: unknown; readonly annotations?: unknown };
  readonly spec?: { readonly suspend?: unknown; readonly sourceRef?: { readonly kind?: unknown; readonly name?: unknown; readonly namespace?: unknown } };
  readonly status?: {
    readonly observedGeneration?: unknown;
    readonly lastAppliedRevision?: unknown;
    readonly lastAttemptedRevision?: unknown;
    readonly conditions?: unknown;
  };
}

const TERMINAL_REASONS: ReadonlySet<string> = new Set(['BuildFailed', 'ReconciliationFailed', 'PruneFailed', 'ValidationFailed']);
// Condition messages are written by the controller (kustomize and apply errors); long ones are cut for logs and results.
const MAX_MESSAGE = 300;

/**
 * Whether a Flux revision names `commit`: `main@sha1:<sha>`, `sha1:<sha>`, or
 * the Flux 0.x form `main/<sha>`. Only a full, case-insensitive match counts.
 */
export function revisionMatches(revision: unknown, commit: string): boolean {
  const sha = commitOfRevision(revision);
  return sha !== undefined && commit !== '' && sha === commit.toLowerCase();
}

/** The commit (lower-case hex) a Flux revision names, or undefined. */
export function commitOfRevision(revision: unknown): string | undefined {
  if (typeof revision !== 'string') return undefined;
  return /(?:sha1:|sha256:|\/)([0-9a-fA-F]{40,64})$/.exec(revision)?.[1]?.toLowerCase();
}

function conditionsOf(obj: KustomizationLike): Condition[] {
  const list = obj.status?.conditions;
  return Array.isArray(list) ? (list.filter((c) => typeof c === 'object' && c !== null) as Condition[]) : [];
}

function text(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE)}…` : line;
}

function describeCondition(condition: Condition | undefined, type: string): string {
  if (!condition) return `no ${type} condition yet`;
  const why = [text(condition.reason), text(condition.message)].filter(Boolean).join(': ');
  return `${type}=${String(condition.status)}${why ? ` (${why})` : ''}`;
}

/** Whether the Kustomization applies `source` (a sourceRef without namespace is in the Kustomization's own). */
export function appliesSource(obj: KustomizationLike, source: SourceRef): boolean {
  const ref = obj.spec?.sourceRef;
  if (!ref) return false;
  const namespace = typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : obj.metadata?.namespace;
  return ref.kind === source.kind && ref.name === source.name && namespace === source.namespace;
}

/**
 * Where one Kustomization stands with respect to `commit`; `newer` holds
 * commits known to contain it (their revision counts as the commit's).
 *
 * `ready`: Ready=True with `lastAppliedRevision` at the commit (and a status
 * that has seen the current generation). `failed`: suspended, Stalled=True, or
 * Ready=False with a reason that only a new commit clears, for an attempt at
 * this very commit (a failure of an older revision may be what the commit fixes).
 * A suspended opt-in layer (annotated `gitops-scaffolder.io/optional-layer`) is
 * `ready`: it is suspended because the cluster has not enabled it.
 * Anything else is `progressing`.
 */
export function kustomizationReadiness(obj: KustomizationLike, commit: string, newer: ReadonlySet<string> = new Set()): KustomizationReadiness {
  const namespace = String(obj.metadata?.namespace ?? '');
  const name = String(obj.metadata?.name ?? '');
  const conditions = conditionsOf(obj);
  const ready = conditions.find((c) => c.type === 'Ready');
  const stalled = conditions.find((c) => c.type === 'Stalled' && c.status === 'True');
  const applied = typeof obj.status?.lastAppliedRevision === 'string' ? obj.status.lastAppliedRevision : undefined;
  // A later commit that contains ours (another run pushed after this one) counts as ours applied.
  const atCommit = revisionMatches(applied, commit) || newer.has(commitOfRevision(applied) ?? '');
  const generation = typeof obj.metadata?.generation === 'number' ? obj.metadata.generation : undefined;
  const observed = typeof obj.status?.observedGeneration === 'number' ? obj.status.observedGeneration : undefined;
  const current = generation === undefined || observed === undefined || observed >= generation;
  const revisionNote = applied ? `applied ${applied}` : 'nothing applied yet';
  const readyStatus = typeof ready?.status === 'string' ? ready.status : undefined;
  const reason = text(ready?.reason);
  const base = {
    namespace,
    name,
    ...(applied ? { lastAppliedRevision: applied } : {}),
    ...(readyStatus === undefined ? {} : { ready: readyStatus }),
    ...(reason === undefined ? {} : { reason }),
  };

  if (obj.spec?.suspend === true) {
    // An opt-in layer this cluster has not enabled is suspended by design: nothing to wait for, nothing failed.
    const annotations = obj.metadata?.annotations;
    if (typeof annotations === 'object' && annotations !== null && (annotations as Record<string, unknown>)[OPTIONAL_LAYER_ANNOTATION] === 'true') {
      return { ...base, phase: 'ready', summary: 'suspended: an opt-in layer this cluster has not enabled' };
    }
    return { ...base, phase: 'failed', summary: `suspended (spec.suspend: true), ${revisionNote}` };
  }
  if (stalled) return { ...base, phase: 'failed', summary: `${describeCondition(stalled, 'Stalled')}, ${revisionNote}` };
  if (ready?.status === 'True' && atCommit && current) return { ...base, phase: 'ready', summary: `${describeCondition(ready, 'Ready')}` };
  const terminal =
    ready?.status === 'False' &&
    typeof ready.reason === 'string' &&
    TERMINAL_REASONS.has(ready.reason) &&
    revisionMatches(obj.status?.lastAttemptedRevision, commit);
  return { ...base, phase: terminal ? 'failed' : 'progressing', summary: `${describeCondition(ready, 'Ready')}, ${revisionNote}` };
}
