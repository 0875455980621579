#!/usr/bin/env node
/**
 * Writes schemas/core-kinds.json: the attributeTypeMap of every model class of
 * the installed @kubernetes/client-node, as [JSON name, type, format] rows by
 * class name. The core kind validator reads this table: importing the models
 * is 718 ES modules, 0.14-0.22 CPU-s in every verifying process, where the
 * table parses in about 1 ms. core-kind-validator.test.ts fails when the
 * installed client-node no longer gives this table: run this script again.
 *
 *   node scripts/core-kind-models.mjs
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const TABLE = fileURLToPath(new URL('../schemas/core-kinds.json', import.meta.url));

/** The table as the installed client-node gives it. */
export async function coreKindTable() {
  const require = createRequire(import.meta.url);
  const { version } = JSON.parse(readFileSync(require.resolve('@kubernetes/client-node/package.json'), 'utf8'));
  const models = await import('@kubernetes/client-node/dist/gen/models/all.js');
  const table = {};
  for (const name of Object.keys(models).sort()) {
    const model = models[name];
    if (typeof model?.getAttributeTypeMap !== 'function') continue;
    table[name] = model.getAttributeTypeMap().map((a) => [a.baseName, a.type, a.format]);
  }
  return { source: `@kubernetes/client-node ${version}`, models: table };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const table = await coreKindTable();
  // One class a line: diffs of a client-node upgrade stay readable.
  const lines = Object.entries(table.models).map(([name, rows]) => `    ${JSON.stringify(name)}: ${JSON.stringify(rows)}`);
  writeFileSync(TABLE, `{\n  "source": ${JSON.stringify(table.source)},\n  "models": {\n${lines.join(',\n')}\n  }\n}\n`);
  process.stdout.write(`${TABLE}: ${lines.length} model classes from ${table.source}\n`);
}
