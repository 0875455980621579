/**
 * Test support: parse rendered manifests and validate every object with the
 * project's strict validators (CRD schemas from schemas/crds, plus any extra
 * directories of upstream CRDs, and the client-node-derived core kinds).
 */
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { FsRepoReader } from '../../src/git/fs-repo-reader.js';
import type { RepoReader } from '../../src/gitops/repo-reader.js';
import { CoreKindValidator } from '../../src/kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../../src/kustomize/crd-schema-dir.js';
import { SchemaValidator } from '../../src/verify/schema-validator.js';

/** A parsed manifest object. */
export interface ManifestObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [key: string]: unknown;
}

/** Every document of a multi-document YAML text, asserting each parses. */
export function parseManifests(text: string): ManifestObject[] {
  return parseAllDocuments(text)
    .map((document) => {
      assert.deepEqual(document.errors, [], 'the manifests parse');
      return document.toJS() as ManifestObject | null;
    })
    .filter((o): o is ManifestObject => o !== null);
}

/** Several schema directories read as one (file names are distinct upstream CRD names). */
function unionReader(readers: readonly RepoReader[]): RepoReader {
  return {
    read: async (path) => {
      for (const reader of readers) {
        const text = await reader.read(path);
        if (text !== undefined) return text;
      }
      return undefined;
    },
    list: async (dir) => [...new Set((await Promise.all(readers.map((r) => r.list(dir)))).flat())].sort(),
    isDirectory: async (path) => (await Promise.all(readers.map((r) => r.isDirectory(path)))).some(Boolean),
  };
}

/**
 * What the strict validators say about each object, as `Kind ns/name: field: message`;
 * an object of a kind no schema knows is a problem too.
 */
export async function strictProblems(objects: readonly ManifestObject[], extraCrdDirs: readonly string[] = []): Promise<string[]> {
  const schemas = unionReader([defaultCrdSchemaDir(), ...extraCrdDirs].map((dir) => new FsRepoReader(dir)));
  const validator = new SchemaValidator({ schemas, coreKinds: new CoreKindValidator() });
  const problems: string[] = [];
  for (const object of objects) {
    const label = `${object.kind} ${object.metadata.namespace ?? '-'}/${object.metadata.name}`;
    const check = await validator.validate(object);
    if (check.status === 'unknown-kind') problems.push(`${label}: no schema for ${object.apiVersion} ${object.kind}`);
    else for (const issue of check.issues) problems.push(`${label}: ${issue.field}: ${issue.message}`);
  }
  return problems;
}
