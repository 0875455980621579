/**
 * `generate-gitops-env verify`, the pre-push gate, as a pure function of the
 * repository (through RepoReader), kustomize (through KustomizeBuilder) and a
 * schema validator (through ObjectValidator).
 *
 * It checks what would make Flux apply something other than what the tree
 * says, or apply it in the wrong order: Kustomizations whose path is missing
 * or does not build, missing prune/interval/retryInterval/timeout or health
 * gating (DESIGN.md, "Rules of the generated tree"), dangling or cyclic
 * dependsOn, strict schema violations in everything that would be applied,
 * postBuild substitution wiring (spec 004), plaintext Secrets and mis-scoped
 * SealedSecrets in the files under clusters/, and a flux-system/ (flux
 * bootstrap's) that the previous commit had and the tree lost, or that the
 * cluster's entry point does not list.
 */
import { ValidationError } from '../errors.js';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { fluxGraphOf, refKey, type FluxNode } from '../graph/flux-graph.js';
import { findCycles } from '../graph/topo-sort.js';
import { metadataOf, specOf, type AppliedKustomization } from './applied-object.js';
import type { ClusterHistory } from './cluster-history.js';
import { entryPointOf, previousOf, resolvePath, type PathResolution } from './cluster-paths.js';
import { checkFluxBootstrap } from './flux-bootstrap-presence.js';
import { fluxGeneratedKustomization } from './flux-generated-kustomization.js';
import { fluxPathBuilder, type FluxBuild } from './flux-path-build.js';
import { checkGeneratedEntryPoint } from './generated-entry-point.js';
import { isBootstrapSync, kustomizationRuleIssues } from './kustomization-rules.js';
import { KustomizationSources } from './kustomization-source.js';
import { formatFinding, type Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import type { KustomizeBuilder } from './kustomize-builder.js';
import { manifestDocuments } from './manifest-documents.js';
import { objectLabel } from './object-label.js';
import { unmatchedPatchTargets } from './patch-targets.js';
import type { ObjectValidator } from './object-validator.js';
import { readPrerequisites } from './platform-prerequisites-reader.js';
import { prerequisitesForInfra } from '../gitops/platform-prerequisites.js';
import { checkRawDocuments, type RawDocument } from './raw-document-checks.js';
import { simulateFlux } from './flux-simulation.js';
import { DEFAULT_TARGET_FLUX, strictSubstitution } from './flux-version.js';
import { analyzeSubstitution } from './substitution.js';
import { checkSuspendedDependencies } from './suspended-dependencies.js';
import { checkResourceSetTemplates, renderedLabel } from './resource-set-templates.js';
import { checkPreviewServiceAccounts } from './preview-service-accounts.js';

export { formatFinding, type Finding } from './finding.js';

/** What verification reads the world through. */
export interface VerifyDeps {
  /** The repository's working tree. */
  readonly reader: RepoReader;
  readonly builder: KustomizeBuilder;
  readonly validator: ObjectValidator;
  /** Absolute path of the same working tree, for the builder. */
  readonly repoRoot: string;
  /** What each cluster path held in the previous commit; the history checks are skipped without it. */
  readonly history?: ClusterHistory;
}

/** What to verify. */
export interface VerifyOptions {
  /** One cluster (a directory under clusters/); every cluster when omitted. */
  readonly cluster?: string;
  /** The Flux minor version the clusters run (`2.8`, `2.9`); default scaffold.yaml's `targetFlux`, else 2.9. */
  readonly targetFlux?: string;
  readonly signal?: AbortSignal;
}

/** The outcome: findings fail the gate, notes do not. */
export interface VerifyReport {
  /** Sorted by their formatted line, duplicates removed. */
  readonly findings: Finding[];
  /** Things that could not be checked, sorted. */
  readonly notes: string[];
  readonly kustomizationsChecked: number;
  /** `N Flux Kustomization(s) checked; substitution wiring is consistent` or `…; M finding(s)`. */
  readonly summary: string;
}

const FLUX_KUSTOMIZATION_API = 'kustomize.toolkit.fluxcd.io/';
const DEFAULT_NAMESPACE = 'flux-system';
/** Schema `required` issues the explicit Kustomization rules below already report in their own words. */
const COVERED_BY_RULES = new Set(['spec.prune', 'spec.interval', 'spec.sourceRef']);

type Build = FluxBuild;

/** A Flux Kustomization raw in a file; `namespace` only when the file says it. */
interface RawKustomization {
  readonly file: string;
  readonly name: string;
  readonly namespace?: string;
  readonly object: Record<string, unknown>;
}

/** A Flux Kustomization of one cluster, as verification tracks it. */
interface Found {
  readonly key: string;
  readonly node: FluxNode;
  readonly object: Record<string, unknown>;
  /** The raw file it is written in, or the directory whose build produced it. */
  readonly file: string;
  /** False when it is in a file under the cluster but in no build: Flux never sees it. */
  readonly listed: boolean;
  /** The Kustomization whose build applies it; none for the root sync's. */
  readonly appliedBy?: string;
  path?: PathResolution;
  build?: Build;
}

function isYamlFile(path: string): boolean {
  return /\.ya?ml$/.test(path);
}

function isFluxKustomization(object: unknown): object is Record<string, unknown> {
  return isRecord(object) && object.kind === 'Kustomization' && typeof object.apiVersion === 'string' && object.apiVersion.startsWith(FLUX_KUSTOMIZATION_API);
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Verifies the Flux trees of one or all clusters. @throws ValidationError for an unusable `cluster` option */
export async function verifyRepository(deps: VerifyDeps, options: VerifyOptions = {}): Promise<VerifyReport> {
  const { reader, builder, validator, repoRoot } = deps;
  const { signal } = options;
  const findings: Finding[] = [];
  const notes = new Set<string>();
  /** `apiVersion kind` → first object seen and how many, for one note per unknown kind. */
  const unknownKinds = new Map<string, { first: string; count: number }>();

  // Each distinct directory is built once per run, however many Kustomizations point at it.
  const build = fluxPathBuilder({ reader, builder, repoRoot, ...(signal ? { signal } : {}) });

  const validate = async (object: unknown, file: string, context: string): Promise<void> => {
    const check = await validator.validate(object);
    const label = objectLabel(object);
    if (check.status === 'unknown-kind') {
      const key = `${String((object as Record<string, unknown>).apiVersion)} ${String((object as Record<string, unknown>).kind)}`;
      const seen = unknownKinds.get(key);
      if (seen) seen.count += 1;
      else unknownKinds.set(key, { first: `${label} in ${context}`, count: 1 });
      return;
    }
    const flux = isFluxKustomization(object);
    for (const issue of check.issues) {
      if (flux && issue.message === 'required field is missing' && COVERED_BY_RULES.has(issue.field)) continue;
      findings.push({ file, object: label, message: issue.field ? `${issue.field}: ${issue.message}` : issue.message });
    }
  };

  const prerequisites = await readPrerequisites(reader);
  findings.push(...prerequisites.findings);
  const strict = strictSubstitution(options.targetFlux ?? prerequisites.value.targetFlux);

  // --- which clusters -------------------------------------------------------
  let clusters: string[];
  if (options.cluster !== undefined) {
    const { cluster } = options;
    if (cluster === '' || cluster.includes('/')) {
      throw new ValidationError([{ field: 'cluster', message: `${JSON.stringify(cluster)} is not a cluster directory name` }]);
    }
    assertRepoPath(`clusters/${cluster}`, 'cluster');
    clusters = (await reader.isDirectory(`clusters/${cluster}`)) ? [cluster] : [];
    if (clusters.length === 0) findings.push({ file: `clusters/${cluster}`, message: 'no such cluster directory' });
  } else {
    const files = await reader.list('clusters');
    clusters = [
      ...new Set(
        files
          .map((f) => f.split('/'))
          .filter((s) => s.length >= 3)
          .map((s) => s[1]!),
      ),
    ].sort();
    if (clusters.length === 0) findings.push({ file: 'clusters', message: 'no cluster directories' });
  }

  // --- raw files: read once, used for Secret checks and to place Kustomizations
  const scanned = options.cluster !== undefined ? clusters.map((c) => `clusters/${c}`) : ['clusters'];
  const rawDocuments: RawDocument[] = [];
  for (const dir of scanned) {
    for (const file of (await reader.list(dir)).filter(isYamlFile)) {
      const text = await reader.read(file);
      if (text === undefined) continue;
      const parsed = manifestDocuments(text);
      if (parsed.error !== undefined) findings.push({ file, message: `not valid YAML: ${parsed.error}` });
      for (const object of parsed.documents) rawDocuments.push({ file, object });
    }
  }
  checkRawDocuments(rawDocuments, findings);

  let checked = 0;
  for (const cluster of clusters) {
    signal?.throwIfAborted();
    const clusterDir = `clusters/${cluster}`;
    const rawKustomizations: RawKustomization[] = rawDocuments
      .filter((d) => d.file.startsWith(`${clusterDir}/`) && isFluxKustomization(d.object))
      .map((d) => {
        const object = d.object as Record<string, unknown>;
        const metadata = metadataOf(object);
        const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
        return { file: d.file, name: String(metadata.name ?? ''), ...(namespace !== undefined ? { namespace } : {}), object };
      });
    const rawFileOf = (name: string, namespace: string): string | undefined =>
      rawKustomizations.find((r) => r.name === name && (r.namespace === undefined || r.namespace === namespace))?.file;

    // Asked for with the root, each path a Kustomization file of the cluster
    // names joins the root's kubectl process (kustomize/batched-kustomize.ts)
    // instead of starting a second one after it. The discovery below builds
    // these same paths whether the root lists them or not (unlisted ones are
    // checked too), so nothing is built that would not be; only sooner.
    // Sources the tree declares tell which paths are in another artifact.
    const sources = new KustomizationSources();
    sources.declare(rawDocuments.filter((d) => d.file.startsWith(`${clusterDir}/`)).map((d) => d.object));
    await Promise.all(
      rawKustomizations.map(async ({ object }) => {
        if (sources.elsewhere(object) !== undefined) return;
        const path = await resolvePath(reader, object);
        // Awaited, with its failures, where discovery reaches it.
        if (path.ok) build(path.dir).catch(() => undefined);
      }),
    );
    const root = await build(clusterDir);
    if (!root.ok) findings.push({ file: clusterDir, message: `does not build: ${root.error}` });
    else findings.push(...(await unmatchedPatchTargets(reader, clusterDir, root.objects)));

    // --- flux bootstrap's flux-system/ kept and applied ----------------------
    findings.push(
      ...checkFluxBootstrap({
        clusterDir,
        files: await reader.list(clusterDir),
        ...(await entryPointOf(reader, clusterDir)),
        ...(await previousOf(deps.history, clusterDir)),
        fluxInstance: rawDocuments.some((d) => d.file.startsWith(`${clusterDir}/`) && isRecord(d.object) && d.object.kind === 'FluxInstance'),
      }),
    );

    // --- discover the cluster's Kustomizations, following nested ones -------
    if (root.ok) sources.declare(root.objects);
    const found = new Map<string, Found>();
    const queue: Found[] = [];
    const add = (object: Record<string, unknown>, origin: string, listed: boolean, appliedBy?: string): void => {
      const node = fluxGraphOf([{ object }]).nodes[0];
      if (node === undefined) return;
      const key = refKey(node);
      if (found.has(key)) return;
      const entry: Found = {
        key,
        node,
        object,
        file: rawFileOf(node.name, node.namespace) ?? origin,
        listed,
        ...(appliedBy !== undefined ? { appliedBy } : {}),
      };
      found.set(key, entry);
      queue.push(entry);
    };
    const drain = async (): Promise<void> => {
      while (queue.length > 0) {
        signal?.throwIfAborted();
        const batch = queue.splice(0);
        await Promise.all(
          batch.map(async (entry) => {
            const elsewhere = sources.elsewhere(entry.object);
            entry.path =
              elsewhere !== undefined
                ? { ok: false, note: true, message: `spec.path ${String(specOf(entry.object).path)} ${elsewhere}: not built or checked here` }
                : await resolvePath(reader, entry.object);
            if (entry.path.ok) entry.build = await build(entry.path.dir);
          }),
        );
        for (const entry of batch) if (entry.build?.ok) sources.declare(entry.build.objects);
        for (const entry of batch) {
          if (entry.build?.ok && entry.path?.ok) {
            for (const object of entry.build.objects) if (isFluxKustomization(object)) add(object, entry.path.dir, true, entry.key);
          }
        }
      }
    };
    if (root.ok) for (const object of root.objects) if (isFluxKustomization(object)) add(object, clusterDir, true);
    await drain();
    for (const raw of rawKustomizations) {
      const listed = [...found.values()].some((f) => f.node.name === raw.name && (raw.namespace === undefined || raw.namespace === f.node.namespace));
      // When the root does not build, nothing can be called unlisted; check them anyway.
      if (!listed) add(raw.object, raw.file, !root.ok);
    }
    await drain();

    // --- ConfigMaps substituteFrom may name, as Flux would find them --------
    const configMaps = new Map<string, Record<string, unknown>>();
    const addConfigMaps = (objects: readonly unknown[], namespaceFor: (object: unknown) => string): void => {
      for (const object of objects) {
        if (!isRecord(object) || object.kind !== 'ConfigMap' || object.apiVersion !== 'v1') continue;
        const key = `${namespaceFor(object)}/${String(metadataOf(object).name ?? '')}`;
        if (!configMaps.has(key)) configMaps.set(key, isRecord(object.data) ? object.data : {});
      }
    };
    // Objects without a namespace land in their applier's (target) namespace;
    // the root is applied by the flux-system sync Kustomization.
    if (root.ok) addConfigMaps(root.objects, (o) => stringOr(metadataOf(o).namespace, DEFAULT_NAMESPACE));
    for (const entry of [...found.values()].sort((a, b) => compare(a.key, b.key))) {
      if (!entry.build?.ok) continue;
      const target = specOf(entry.object).targetNamespace;
      addConfigMaps(entry.build.objects, (o) =>
        typeof target === 'string' && target !== '' ? target : stringOr(metadataOf(o).namespace, entry.node.namespace),
      );
    }
    addConfigMaps(
      rawDocuments.filter((d) => d.file.startsWith(`${clusterDir}/`) && typeof metadataOf(d.object).namespace === 'string').map((d) => d.object),
      (o) => String(metadataOf(o).namespace),
    );

    // --- check the root output, then each Kustomization ---------------------
    if (root.ok) {
      for (const object of root.objects) {
        const file = isFluxKustomization(object) ? (rawFileOfObject(object, rawFileOf) ?? clusterDir) : clusterDir;
        await validate(object, file, clusterDir);
      }
    }
    const entries = [...found.values()].sort((a, b) => compare(a.key, b.key));
    const applied: AppliedKustomization[] = [];
    const patchChecked = new Set<string>([clusterDir]);
    for (const entry of entries) {
      signal?.throwIfAborted();
      const at = (message: string): void => {
        findings.push({ file: entry.file, object: `Kustomization ${entry.key}`, message });
      };
      const spec = specOf(entry.object);
      if (!entry.listed) at(`is in no build of ${clusterDir}: Flux never applies it`);
      if (!entry.listed) await validate(entry.object, entry.file, entry.file);

      for (const issue of kustomizationRuleIssues(spec, isBootstrapSync(entry.key, entry.file, clusterDir))) at(issue);
      for (const dependency of entry.node.dependsOn) {
        if (!found.has(refKey(dependency))) at(`dependsOn ${refKey(dependency)} does not exist`);
      }

      if (entry.path && !entry.path.ok) {
        if (entry.path.note) notes.add(formatFinding({ file: entry.file, object: `Kustomization ${entry.key}`, message: entry.path.message }));
        else at(entry.path.message);
      }
      const built = entry.build;
      if (built && !built.ok) at(`spec.path ${String(spec.path)} does not build: ${built.error}`);
      if (!built?.ok || !entry.path?.ok) continue;
      const dir = entry.path.dir;
      // Once a directory, however many Kustomizations apply it.
      if (!patchChecked.has(dir)) {
        patchChecked.add(dir);
        findings.push(...(await unmatchedPatchTargets(reader, dir, built.objects)));
      }

      const substitution = analyzeSubstitution({
        kustomization: entry.object,
        objects: built.objects,
        configMap: (namespace, name) => configMaps.get(`${namespace}/${name}`),
        strict,
      });
      for (const issue of substitution.issues) at(issue);
      for (const note of substitution.notes) notes.add(formatFinding({ file: entry.file, object: `Kustomization ${entry.key}`, message: note }));

      const objects: Record<string, unknown>[] = [];
      for (const object of built.objects) {
        const file = isFluxKustomization(object) ? (rawFileOfObject(object, rawFileOf) ?? dir) : dir;
        const substituted = substitution.apply(object);
        await validate(substituted, file, dir);
        if (isRecord(substituted)) objects.push(substituted);
      }
      if (entry.listed) {
        const { key, file, object, appliedBy } = entry;
        applied.push({ key, file, dir, object, dependsOn: entry.node.dependsOn.map(refKey), objects, ...(appliedBy !== undefined ? { appliedBy } : {}) });
      }
    }

    // --- Flux's apply order on a fresh cluster -------------------------------
    // What the cluster's infrastructure provider installs itself (cluster-config infra_provider) counts as there.
    const infraProvider = configMaps.get(`${DEFAULT_NAMESPACE}/cluster-config`)?.infra_provider;
    const clusterPrerequisites = prerequisitesForInfra(prerequisites.value, typeof infraProvider === 'string' ? infraProvider : undefined);
    const simulated = simulateFlux({
      clusterDir,
      kustomizations: applied,
      prerequisites: clusterPrerequisites,
      targetFlux: options.targetFlux ?? prerequisites.value.targetFlux ?? DEFAULT_TARGET_FLUX,
      ...(root.ok ? { rootObjects: root.objects } : {}),
    });
    findings.push(...simulated.findings);
    for (const note of simulated.notes) notes.add(note);

    // --- opt-in layers, and the Flux Operator's templates after Flux's -------
    findings.push(...checkSuspendedDependencies(entries.filter((e) => e.listed)));
    const templates = checkResourceSetTemplates(applied);
    findings.push(...templates.findings);
    for (const note of templates.notes) notes.add(note);
    for (const rendered of templates.rendered) {
      const check = await validator.validate(rendered.object);
      if (check.status !== 'unknown-kind') {
        for (const issue of check.issues)
          findings.push({ file: rendered.file, object: renderedLabel(rendered), message: issue.field ? `${issue.field}: ${issue.message}` : issue.message });
      }
    }
    findings.push(...checkPreviewServiceAccounts(applied));

    const generatedRoot = await fluxGeneratedKustomization(reader, clusterDir);
    if (generatedRoot !== undefined) {
      const paths = entries.flatMap((e) => (e.path?.ok ? [{ key: e.key, file: e.file, dir: e.path.dir }] : []));
      findings.push(...checkGeneratedEntryPoint(clusterDir, generatedRoot.roots, paths));
    }

    for (const cycle of findCycles(entries.map((e) => e.node))) {
      const first = found.get(cycle[0]!);
      findings.push({
        ...(first ? { file: first.file } : {}),
        object: `Kustomization ${cycle[0]!}`,
        message: `dependsOn cycle: ${cycle.join(' -> ')}`,
      });
    }
    checked += found.size;
  }

  for (const [kind, { first, count }] of unknownKinds) {
    notes.add(`no schema for ${kind}: ${count} object(s) not validated (first: ${first})`);
  }

  const unique = new Map<string, Finding>();
  for (const finding of findings) {
    const line = formatFinding(finding);
    if (!unique.has(line)) unique.set(line, finding);
  }
  const sorted = [...unique].sort(([a], [b]) => compare(a, b)).map(([, finding]) => finding);
  const summary =
    sorted.length === 0
      ? `${checked} Flux Kustomization(s) checked; substitution wiring is consistent`
      : `${checked} Flux Kustomization(s) checked; ${sorted.length} finding(s)`;
  return { findings: sorted, notes: [...notes].sort(compare), kustomizationsChecked: checked, summary };
}

function rawFileOfObject(object: Record<string, unknown>, rawFileOf: (name: string, namespace: string) => string | undefined): string | undefined {
  const metadata = metadataOf(object);
  return rawFileOf(String(metadata.name ?? ''), stringOr(metadata.namespace, DEFAULT_NAMESPACE));
}
