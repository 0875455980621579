/**
 * Writes schemas/crd-table.json: the CRDs of schemas/crds by kind and version,
 * which a verifying process reads instead of the YAML files (3 ms against
 * 60-90 ms). Run after adding or upgrading a CRD file there;
 * crd-table.test.ts fails until the table holds what the files do.
 *
 *   npm run crd-table
 */
import { writeFile } from 'node:fs/promises';
import { FsRepoReader } from '../src/git/fs-repo-reader.js';
import { defaultCrdSchemaDir, shippedCrdTablePath } from '../src/kustomize/crd-schema-dir.js';
import { crdTableOf, crdTableText } from '../src/verify/crd-table.js';

const kinds = await crdTableOf(new FsRepoReader(defaultCrdSchemaDir()));
await writeFile(shippedCrdTablePath(), crdTableText({ source: 'schemas/crds', kinds }));
process.stdout.write(`${shippedCrdTablePath()}: ${Object.keys(kinds).length} kinds from schemas/crds\n`);
