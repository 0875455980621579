/**
 * The schemas of a set of CustomResourceDefinitions, by `group/kind` and
 * version: what the schema validator checks custom resources against. Read
 * from upstream CRD files (crdKindsIn, crdTableOf), or from the table the
 * package ships beside its CRD files (`schemas/crd-table.json`, written by
 * `scripts/crd-table.ts` from those files): reading YAML was the larger part of
 * a verifying process's first use of the schemas, 60-90 ms for the 22 shipped
 * files against 3 ms for their JSON.
 */
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import type { RepoReader } from '../gitops/repo-reader.js';
import { isRecord } from '../model/is-record.js';

/** One version of a CRD: whether the API server serves it, and its `openAPIV3Schema`. */
export interface CrdVersionSchema {
  readonly served: boolean;
  readonly schema: unknown;
}

/** `group/kind` → version name → that version's schema. */
export type CrdKinds = Readonly<Record<string, Readonly<Record<string, CrdVersionSchema>>>>;

/** The file `scripts/crd-table.ts` writes: the CRDs of a schema directory, by kind. */
export interface CrdTable {
  /** The directory it was read from, relative to the package root. */
  readonly source: string;
  readonly kinds: CrdKinds;
}

/**
 * The CRDs of one schema file. These are the package's own upstream files,
 * not input, so they are read with js-yaml's YAML 1.2 core schema: a tenth of
 * the CPU of the `yaml` package's parse (which keeps what this needs not:
 * source positions, comments, a document model). Its tests check that both
 * read every shipped file the same.
 */
export function crdKindsIn(text: string): CrdKinds {
  const byKind: Record<string, Record<string, CrdVersionSchema>> = {};
  for (const crd of loadAll(text, undefined, { schema: CORE_SCHEMA }) as unknown[]) {
    if (!isRecord(crd) || crd.kind !== 'CustomResourceDefinition' || !isRecord(crd.spec)) continue;
    const { group, names, versions } = crd.spec;
    if (typeof group !== 'string' || !isRecord(names) || typeof names.kind !== 'string' || !Array.isArray(versions)) continue;
    const byVersion: Record<string, CrdVersionSchema> = {};
    for (const version of versions) {
      if (!isRecord(version) || typeof version.name !== 'string') continue;
      const schema = isRecord(version.schema) ? version.schema.openAPIV3Schema : undefined;
      byVersion[version.name] = { served: version.served !== false, schema };
    }
    byKind[`${group}/${names.kind}`] = byVersion;
  }
  return byKind;
}

/** Every CRD of a schema directory's `*.yaml` files; a kind defined twice keeps its first definition, as the validator does. */
export async function crdTableOf(schemas: RepoReader): Promise<CrdKinds> {
  const kinds: Record<string, Readonly<Record<string, CrdVersionSchema>>> = {};
  for (const path of (await schemas.list('')).filter((name) => /\.ya?ml$/.test(name))) {
    const text = await schemas.read(path);
    if (text === undefined) continue;
    for (const [kind, versions] of Object.entries(crdKindsIn(text))) if (!Object.hasOwn(kinds, kind)) kinds[kind] = versions;
  }
  return kinds;
}

/** The table as `schemas/crd-table.json` holds it: one kind a line, so a CRD upgrade shows as the lines of the kinds it touched. */
export function crdTableText(table: CrdTable): string {
  const lines = Object.entries(table.kinds).map(([kind, versions]) => `    ${JSON.stringify(kind)}: ${JSON.stringify(versions)}`);
  return `{\n  "source": ${JSON.stringify(table.source)},\n  "kinds": {\n${lines.join(',\n')}\n  }\n}\n`;
}
