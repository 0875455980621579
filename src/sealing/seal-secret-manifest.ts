/**
 * `generate-gitops-env seal`: a Secret manifest in, a SealedSecret manifest out,
 * as `kubeseal --cert` does offline (kubeseal's `seal` in pkg/kubeseal).
 */
import { parseAllDocuments, stringify } from 'yaml';
import { ValidationError, type FieldIssue } from '../errors.js';
import type { SealingScope } from './seal.js';
import { buildSealedSecret, scopeOfSealedSecret } from './sealed-secret.js';
import type { SealingCertificate } from './sealing-certificate.js';

// Kubernetes decodes Secret data with Go's base64.StdEncoding, which skips CR and
// LF but nothing else: wrapped lines are fine, other stray characters are not.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseOneObject(yamlText: string): unknown {
  const documents = parseAllDocuments(yamlText).filter((d) => d.contents !== null || d.errors.length > 0);
  for (const document of documents) {
    const error = document.errors[0];
    if (error) {
      // yaml's own message quotes the offending source line, which may be a
      // stringData value: report only where it is.
      const at = error.linePos?.[0];
      throw new ValidationError(`input is not valid YAML or JSON (${error.code}${at ? ` at line ${at.line}, column ${at.col}` : ''})`);
    }
  }
  if (documents.length !== 1) {
    throw new ValidationError(`input must hold exactly one Secret manifest, found ${documents.length} documents`);
  }
  return documents[0]?.toJS();
}

function stringMap(value: unknown, field: string, issues: FieldIssue[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isMapping(value)) {
    issues.push({ field, message: 'must be a mapping of strings' });
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    // An unquoted `true` or `1234` is a YAML boolean or number, which the API server rejects here.
    if (typeof v === 'string') out[key] = v;
    else issues.push({ field: `${field}.${key}`, message: 'must be a string (quote it in YAML)' });
  }
  return out;
}

function flagIssue(field: string, flag: string): FieldIssue {
  return { field, message: `is required: set it in the manifest or pass ${flag}` };
}

/**
 * Seals one Secret manifest (YAML or JSON) into a SealedSecret manifest (YAML).
 *
 * `data` values are base64-decoded to the raw bytes that get sealed; `stringData`
 * values are sealed as UTF-8 and win over a `data` key of the same name, as the
 * API server merges them. `opts.name` / `opts.namespace` override the manifest's.
 * `type`, `immutable`, labels and annotations carry over to the template, minus
 * kubectl's last-applied annotation. Without `opts.scope` the scope comes from the
 * Secret's own scope annotations (as kubeseal does), else strict.
 *
 * @returns the SealedSecret as one YAML document; no plaintext value appears in it
 * @throws ValidationError naming each bad field: not one v1 Secret, bad base64,
 *   no data, missing or malformed name or namespace
 */
export function sealSecretManifest(
  yamlText: string,
  opts: { certificate: SealingCertificate; namespace?: string; name?: string; scope?: SealingScope },
): string {
  const secret = parseOneObject(yamlText);
  if (!isMapping(secret)) throw new ValidationError('input must be a Secret manifest (a YAML or JSON object)');

  const issues: FieldIssue[] = [];
  if (secret.kind !== 'Secret') issues.push({ field: 'kind', message: 'must be Secret' });
  if (secret.apiVersion !== 'v1') issues.push({ field: 'apiVersion', message: 'must be v1' });
  if (issues.length > 0) throw new ValidationError(issues);

  const metadata = secret.metadata ?? {};
  if (!isMapping(metadata)) throw new ValidationError([{ field: 'metadata', message: 'must be a mapping' }]);

  const name = opts.name ?? metadata.name;
  const namespace = opts.namespace ?? metadata.namespace;
  if (name === undefined || name === null || name === '') issues.push(flagIssue('metadata.name', '--name'));
  else if (typeof name !== 'string') issues.push({ field: 'metadata.name', message: 'must be a string' });
  if (namespace === undefined || namespace === null || namespace === '') issues.push(flagIssue('metadata.namespace', '--namespace'));
  else if (typeof namespace !== 'string') issues.push({ field: 'metadata.namespace', message: 'must be a string' });

  const labels = stringMap(metadata.labels, 'metadata.labels', issues);
  const annotations = stringMap(metadata.annotations, 'metadata.annotations', issues);

  const type = secret.type ?? 'Opaque';
  if (typeof type !== 'string' || type === '') issues.push({ field: 'type', message: 'must be a non-empty string' });
  const immutable = secret.immutable ?? undefined;
  if (immutable !== undefined && typeof immutable !== 'boolean') issues.push({ field: 'immutable', message: 'must be true or false' });

  const values: Record<string, Buffer | string> = {};
  const data = secret.data ?? {};
  if (!isMapping(data)) {
    issues.push({ field: 'data', message: 'must be a mapping of base64 strings' });
  } else {
    for (const [key, value] of Object.entries(data)) {
      const text = typeof value === 'string' ? value.replace(/[\r\n]/g, '') : undefined;
      // The message names the key only; the value may be a credential.
      if (text === undefined || !BASE64.test(text)) issues.push({ field: `data.${key}`, message: 'must be standard padded base64' });
      else values[key] = Buffer.from(text, 'base64');
    }
  }
  Object.assign(values, stringMap(secret.stringData, 'stringData', issues));
  if (issues.length === 0 && Object.keys(values).length === 0) {
    issues.push({ field: 'data', message: 'the Secret has no data or stringData: nothing to seal' });
  }
  if (issues.length > 0) throw new ValidationError(issues);

  const sealed = buildSealedSecret({
    name: name as string,
    namespace: namespace as string,
    scope: opts.scope ?? scopeOfSealedSecret({ metadata: { annotations } }),
    type: type as string,
    ...(immutable !== undefined ? { immutable: immutable as boolean } : {}),
    data: values,
    labels,
    annotations,
    certificate: opts.certificate,
  });
  // lineWidth 0: a sealed value stays one line, as kubeseal writes it.
  return stringify(sealed, { lineWidth: 0 });
}
