#!/usr/bin/env node
// Runs the tests with node's own test runner (tsx as the loader), with the
// upstream kubectl and helm (scripts/upstream-tools.mjs) first on PATH.
//
//   node scripts/run-tests.mjs                 every suite, in one node --test run (npm test, CI)
//   node scripts/run-tests.mjs --suite unit    the pure tests, loaded once in one process (npm run test:unit)
//   node scripts/run-tests.mjs --suite integration | e2e
//   node scripts/run-tests.mjs path/to/a.test.ts src/dir …   those files, one process each
//
// scripts/test-suites.mjs decides which file belongs to which suite. The unit
// tests run inside one entry (scripts/unit-entry.mjs): node and tsx start once
// for all of them instead of once per file. Node 20's --test neither expands
// globs nor shares a process between files (no --experimental-test-isolation),
// so both are done here.
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { classifyTests, testFilesUnder } from './test-suites.mjs';
import { upstreamToolsBin } from './upstream-tools.mjs';

const SUITES = ['unit', 'integration', 'e2e'];
const UNIT_ENTRY = 'scripts/unit-entry.mjs';

const args = process.argv.slice(2);
const suiteAt = args.indexOf('--suite');
const suite = suiteAt === -1 ? undefined : args[suiteAt + 1];
if (suiteAt !== -1 && !SUITES.includes(suite ?? '')) {
  console.error(`--suite takes one of ${SUITES.join(', ')}`);
  process.exit(2);
}
const paths = args.filter((_, index) => suiteAt === -1 || (index !== suiteAt && index !== suiteAt + 1));

let targets;
if (paths.length > 0) targets = testFilesUnder(paths);
else {
  const suites = classifyTests();
  const unit = suites.unit.length > 0 ? [UNIT_ENTRY] : [];
  if (suite === undefined) targets = [...unit, ...suites.integration, ...suites.e2e];
  else targets = suite === 'unit' ? unit : suites[suite];
}

// The real upstream kubectl 1.35 (kustomize v5.7.1) and helm v4 from the dev dependency come
// first on PATH: every tree the tests build is built by the kustomize the runner image ships.
const env = { ...process.env, PATH: `${upstreamToolsBin()}:${process.env.PATH ?? ''}` };
const started = performance.now();
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...targets], { stdio: 'inherit', env });
// Only a suite run says how long it took: the full run's last line stays node's summary (CI reads it).
if (suite !== undefined) console.log(`# ${suite} suite: ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(result.status ?? 1);
