/**
 * The cluster's own Flux installation stays in its tree. `flux bootstrap`
 * writes `clusters/<name>/flux-system/` (gotk-components.yaml, gotk-sync.yaml,
 * kustomization.yaml), and its sync Kustomization, pointed at the cluster path
 * with `prune: true`, garbage-collects whatever the path stops applying: a
 * commit that loses flux-system/, or an entry point that does not list it,
 * makes Flux delete itself. And Flux has one owner: a FluxInstance (the Flux
 * Operator) beside bootstrap's controllers makes both manage them.
 */
import { FLUX_BOOTSTRAP_COMPONENTS, fluxOwnerConflict } from '../gitops/flux-instance-plan.js';
import type { ClusterSnapshot } from './cluster-history.js';
import type { Finding } from './finding.js';

/** The directory flux bootstrap writes into a cluster path. */
export const FLUX_BOOTSTRAP_DIR = 'flux-system';
/** The sync Kustomization flux bootstrap creates, the one that would prune. */
const SYNC_OBJECT = 'Kustomization flux-system/flux-system';

/** What {@link checkFluxBootstrap} looks at, for one cluster path. */
export interface FluxBootstrapInput {
  /** `clusters/<name>`. */
  readonly clusterDir: string;
  /** Every file below it now, repository-relative. */
  readonly files: readonly string[];
  /** Its entry point (kustomization file) with the resources it lists, when it has one that parses. */
  readonly entryPoint?: { readonly file: string; readonly resources: readonly string[] };
  /** What it held in the previous commit, when known. */
  readonly previous?: ClusterSnapshot;
  /**
   * Whether the cluster now has a FluxInstance: the Flux Operator installs and
   * syncs Flux, and removing flux-system/ is the documented migration.
   */
  readonly fluxInstance: boolean;
}

function normalize(entry: string): string {
  return entry.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

/** Findings for a lost or unlisted flux-system/, or one kept beside a FluxInstance, one line each. */
export function checkFluxBootstrap(input: FluxBootstrapInput): Finding[] {
  const { clusterDir } = input;
  const dir = `${clusterDir}/${FLUX_BOOTSTRAP_DIR}`;
  const below = (files: readonly string[]) => files.some((f) => f.startsWith(`${dir}/`));
  const findings: Finding[] = [];

  if (!below(input.files)) {
    const previous = input.previous;
    if (previous !== undefined && below(previous.files) && !input.fluxInstance) {
      const short = previous.commit.slice(0, 12);
      findings.push({
        file: dir,
        object: SYNC_OBJECT,
        message: `flux-system/ was in commit ${short} and is gone: the sync (prune: true) would delete Flux itself; restore it with \`git checkout ${short} -- ${dir}\` and keep it in ${clusterDir}'s kustomization resources`,
      });
    }
    return findings;
  }

  if (input.fluxInstance && input.files.includes(`${clusterDir}/${FLUX_BOOTSTRAP_COMPONENTS}`)) {
    findings.push({ file: dir, object: SYNC_OBJECT, message: fluxOwnerConflict(clusterDir) });
  }

  const entryPoint = input.entryPoint;
  if (entryPoint !== undefined) {
    const listed = entryPoint.resources.map(normalize).some((r) => r === FLUX_BOOTSTRAP_DIR || r.startsWith(`${FLUX_BOOTSTRAP_DIR}/`));
    if (!listed) {
      findings.push({
        file: entryPoint.file,
        object: SYNC_OBJECT,
        message: `resources does not list flux-system, so the sync (prune: true) would delete what flux bootstrap installed, Flux included: add flux-system to resources`,
      });
    }
  }
  return findings;
}
