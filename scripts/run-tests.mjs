#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's own test runner (tsx as the loader).
// Node 20's --test does not expand globs itself, so the file list is built here.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['src', 'test'];
const files = [];
for (const root of roots) {
  if (root.endsWith('.test.ts')) { files.push(root); continue; }
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.test.ts')) files.push(join(entry.parentPath ?? entry.path, entry.name));
  }
}
files.sort();
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
