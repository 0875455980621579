/**
 * Flux tuned the way spec 004 runs it ("How Flux itself is tuned"), as
 * FluxInstance `spec.kustomize.patches` — a patch of the operator's
 * manifests, not a fork: source-controller and kustomize-controller reconcile
 * more objects at once, a Kustomization blocked on a dependency re-checks
 * every ten seconds instead of every thirty, and kustomize- and
 * helm-controller abandon a health check when a new revision arrives instead
 * of waiting out its timeout on the broken revision the fix replaces.
 *
 * The feature gate exists from kustomize-controller v1.7.0 (Flux 2.7) and
 * helm-controller v1.5.0 (Flux 2.8), read in each controller's
 * internal/features/features.go at those tags. A controller refuses to start
 * on a gate it does not know, so the gate is only set where the distribution's
 * version range cannot install an older controller.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { fluxMinorFloor } from './flux-version-range.js';
import { durationSchema } from './layer-catalog-schema.js';
import { toYaml } from './yaml.js';

const concurrencySchema = z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(100, 'must be at most 100');

/** scaffold.yaml `fluxInstance.tuning`. */
export const fluxTuningSchema = z
  .object({
    /** Off: the operator's manifests as they ship. */
    enabled: z.boolean({ error: 'must be true or false' }).default(true),
    /** `--concurrent` per controller (Flux's default is 4 for each). */
    concurrent: z
      .object({
        sourceController: concurrencySchema.default(10),
        kustomizeController: concurrencySchema.default(6),
        helmController: concurrencySchema.optional(),
      })
      .strict()
      .prefault({}),
    /** kustomize-controller `--requeue-dependency` (Flux's default is 30s). */
    requeueDependency: durationSchema.default('10s'),
    /**
     * The CancelHealthCheckOnNewRevision gate on kustomize- and helm-controller.
     * Unset: on for each controller the distribution's version range guarantees
     * has it. true: required on both, refused for a range that admits an older
     * controller. false: off.
     */
    cancelHealthCheckOnNewRevision: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict();

export type FluxTuning = z.infer<typeof fluxTuningSchema>;

/** One entry of FluxInstance `spec.kustomize.patches`. */
export interface FluxInstancePatch {
  readonly target: { readonly kind: 'Deployment' | 'NetworkPolicy'; readonly name: string };
  readonly patch: string;
}

export { fluxMinorFloor };

const CANCEL_GATE = 'CancelHealthCheckOnNewRevision';

/** The first Flux minor (2.<minor>) whose controller has the gate. */
const GATE_SINCE: Readonly<Record<string, number>> = { 'kustomize-controller': 7, 'helm-controller': 8 };

function addArgs(name: string, args: readonly string[]): FluxInstancePatch {
  const operations = args.map((value) => ({ op: 'add', path: '/spec/template/spec/containers/0/args/-', value }));
  return { target: { kind: 'Deployment', name }, patch: toYaml(operations) };
}

/**
 * The FluxInstance patches of `tuning` for the installed `components`.
 * @throws ValidationError naming `fluxInstance.tuning.cancelHealthCheckOnNewRevision` when it is required and the version range admits a controller without the gate
 */
export function fluxTuningPatches(tuning: FluxTuning, components: readonly string[], distributionVersion: string): FluxInstancePatch[] {
  if (!tuning.enabled) return [];
  const floor = fluxMinorFloor(distributionVersion);
  const gated = (controller: string): boolean => {
    if (tuning.cancelHealthCheckOnNewRevision === false) return false;
    const supported = floor === undefined || floor >= GATE_SINCE[controller]!;
    if (!supported && tuning.cancelHealthCheckOnNewRevision === true) {
      throw new ValidationError([
        {
          field: 'fluxInstance.tuning.cancelHealthCheckOnNewRevision',
          message: `${controller} has the ${CANCEL_GATE} gate from Flux 2.${GATE_SINCE[controller]} and refuses to start on a gate it does not know, but distribution.version ${JSON.stringify(distributionVersion)} admits an older release: raise the version range, or leave the setting unset to apply the gate only where it exists`,
        },
      ]);
    }
    return supported;
  };
  const patches: FluxInstancePatch[] = [];
  const args = new Map<string, string[]>();
  const add = (controller: string, arg: string): void => {
    if (!components.includes(controller)) return;
    args.set(controller, [...(args.get(controller) ?? []), arg]);
  };
  add('source-controller', `--concurrent=${tuning.concurrent.sourceController}`);
  add('kustomize-controller', `--concurrent=${tuning.concurrent.kustomizeController}`);
  add('kustomize-controller', `--requeue-dependency=${tuning.requeueDependency}`);
  if (tuning.concurrent.helmController !== undefined) add('helm-controller', `--concurrent=${tuning.concurrent.helmController}`);
  for (const controller of ['kustomize-controller', 'helm-controller']) {
    if (components.includes(controller) && gated(controller)) add(controller, `--feature-gates=${CANCEL_GATE}=true`);
  }
  for (const [controller, list] of args) patches.push(addArgs(controller, list));
  return patches;
}
