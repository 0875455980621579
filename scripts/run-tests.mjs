#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's own test runner (tsx as the loader),
// with the upstream kubectl and helm (scripts/upstream-tools.mjs) first on PATH.
// Node 20's --test does not expand globs itself, so the file list is built here.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { upstreamToolsBin } from './upstream-tools.mjs';

const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['src', 'test'];
const files = [];
for (const root of roots) {
  if (root.endsWith('.test.ts')) { files.push(root); continue; }
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.test.ts')) files.push(join(entry.parentPath ?? entry.path, entry.name));
  }
}
files.sort();
// The real upstream kubectl 1.35 (kustomize v5.7.1) and helm v4 from the dev dependency come
// first on PATH: every tree the tests build is built by the kustomize the runner image ships.
const env = { ...process.env, PATH: `${upstreamToolsBin()}:${process.env.PATH ?? ''}` };
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
