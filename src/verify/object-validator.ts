/**
 * The port through which verification checks one Kubernetes object against
 * its schema. Declared here, by its consumer, so the core never imports the
 * Kubernetes client whose model metadata backs the built-in kinds.
 */
import type { FieldIssue } from '../errors.js';

/** The outcome of checking one object. */
export type ObjectCheck =
  /** A schema for the object's kind was found; `issues` is empty when the object conforms. */
  | { readonly status: 'checked'; readonly issues: readonly FieldIssue[] }
  /** No schema is known for this apiVersion and kind: the object could not be checked. */
  | { readonly status: 'unknown-kind' };

/** Checks parsed Kubernetes objects (plain JSON values) against their schemas. */
export interface ObjectValidator {
  /**
   * Validates one object. Issues name the offending field as a dotted path
   * (`spec.template.spec.containers[0].image`); an empty field means the object as a whole.
   */
  validate(object: unknown): Promise<ObjectCheck>;
}
