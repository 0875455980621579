/**
 * How the Flux version a platform targets changes what verify expects.
 * kustomize-controller v1.9 (Flux 2.9) enabled its StrictPostBuildSubstitutions
 * feature gate by default: a `${var}` without a default and without a value
 * fails the reconcile. Before, it became an empty string. A platform that
 * does not say targets the current behaviour.
 */
import { ValidationError } from '../errors.js';
import { targetFluxSchema } from '../gitops/platform-prerequisites.js';

/** What verify assumes when neither `--target-flux` nor scaffold.yaml's `targetFlux` says. */
export const DEFAULT_TARGET_FLUX = '2.9';

/** Whether an undefined variable fails the reconcile on this Flux minor version. */
export function strictSubstitution(targetFlux: string = DEFAULT_TARGET_FLUX): boolean {
  return Number(targetFlux.split('.')[1]) >= 9;
}

/** Checks a `--target-flux` value. @throws ValidationError naming `field` */
export function parseTargetFlux(value: string, field: string): string {
  const parsed = targetFluxSchema.safeParse(value);
  if (!parsed.success) throw new ValidationError([{ field, message: `${JSON.stringify(value)} must be a Flux minor version such as 2.8 or 2.9` }]);
  return parsed.data;
}
