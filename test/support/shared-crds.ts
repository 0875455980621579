/**
 * The real CRD schemas generated objects are validated against: `../shared/crds`
 * beside the checkout (the validation data the project is built from), else the
 * package's own copy in `schemas/crds`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { FsRepoReader } from '../../src/git/fs-repo-reader.js';
import { CoreKindValidator } from '../../src/kustomize/core-kind-validator.js';
import { SchemaValidator } from '../../src/verify/schema-validator.js';
import { PACKAGE_ROOT } from './cli.js';

const shared = join(PACKAGE_ROOT, '..', 'shared', 'crds');

export const CRD_DIR = existsSync(shared) ? shared : join(PACKAGE_ROOT, 'schemas', 'crds');

/** A validator of custom resources by their real CRD schemas and of core kinds by Kubernetes' own. */
export function crdValidator(): SchemaValidator {
  return new SchemaValidator({ schemas: new FsRepoReader(CRD_DIR), coreKinds: new CoreKindValidator() });
}

/** The objects of a multi-document YAML text (a kustomize build, a rendered file); empty documents left out. */
export function objectsOf<T extends object = Record<string, unknown>>(text: string): T[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as unknown)
    .filter((object): object is T => typeof object === 'object' && object !== null);
}
