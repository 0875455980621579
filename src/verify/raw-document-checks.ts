/**
 * Checks that read the files under clusters/ as written, every document, not
 * the build: a plaintext Secret is a leak once committed whether or not
 * anything applies it, and kustomize rewrites an unquoted `true` annotation
 * to "true", hiding the SealedSecret scope mistake the controller would reject.
 */
import { metadataOf, specOf } from './applied-object.js';
import { fieldPath } from './field-path.js';
import type { Finding } from './finding.js';
import { isRecord } from '../model/is-record.js';
import { objectLabel } from './object-label.js';

/** One parsed document and the file it is in. */
export interface RawDocument {
  readonly file: string;
  readonly object: unknown;
}

const SCOPE_ANNOTATIONS = ['sealedsecrets.bitnami.com/cluster-wide', 'sealedsecrets.bitnami.com/namespace-wide'];

function nonEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return value !== '';
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `${value === null ? 'null' : typeof value} ${JSON.stringify(value)}`;
}

/** Plaintext Secrets and mis-scoped SealedSecrets, as written. */
export function checkRawDocuments(documents: readonly RawDocument[], findings: Finding[]): void {
  for (const { file, object } of documents) {
    if (!isRecord(object)) continue;
    if (object.kind === 'Secret' && (nonEmpty(object.data) || nonEmpty(object.stringData))) {
      findings.push({
        file,
        object: objectLabel(object),
        message: 'plaintext credential in Git: a Secret with data or stringData (commit a SealedSecret instead)',
      });
    }
    if (object.kind !== 'SealedSecret') continue;
    const annotations = isRecord(metadataOf(object).annotations) ? (metadataOf(object).annotations as Record<string, unknown>) : {};
    for (const name of SCOPE_ANNOTATIONS) {
      if (!(name in annotations) || annotations[name] === 'true') continue;
      findings.push({
        file,
        object: objectLabel(object),
        message: `${fieldPath(['metadata', 'annotations', name])} must be the string "true" (got ${describe(annotations[name])}); the controller accepts nothing else`,
      });
    }
    const template = specOf(object).template;
    const templateAnnotations =
      isRecord(template) && isRecord(template.metadata) && isRecord(template.metadata.annotations) ? template.metadata.annotations : {};
    for (const name of SCOPE_ANNOTATIONS) {
      if (name in templateAnnotations && !(name in annotations)) {
        findings.push({
          file,
          object: objectLabel(object),
          message: `${name} is set on spec.template.metadata, where the controller ignores it: set it on metadata.annotations`,
        });
      }
    }
  }
}
