// Which suite each test file belongs to, by a rule rather than a list:
// - e2e: test/e2e/ (a real browser against the real service);
// - unit: any other *.test.ts whose runtime imports, followed through the
//   repository's own modules, reach no child process, socket, server, database or
//   browser (UNIT_FORBIDDEN) and no test/support/ harness (they start git servers,
//   PostgreSQL, API doubles);
// - integration: every other test.
// A test that starts importing an edge moves to integration by itself; a unit
// test that reaches one anyway (global fetch, a computed import) is stopped by
// the guard scripts/unit-entry.mjs installs before loading the unit tests.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const REPO_ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');

/** Builtins and packages a unit test may not reach: processes, sockets, servers, databases, a browser. */
export const UNIT_FORBIDDEN = [
  'child_process',
  'net',
  'tls',
  'http',
  'https',
  'http2',
  'dgram',
  'cluster',
  'worker_threads',
  'pg',
  '@electric-sql/pglite',
  'fastify',
  '@fastify/',
  '@kubernetes/client-node',
  'playwright-core',
  'autocannon',
  'undici',
  'light-my-request',
];

const E2E_DIRS = ['test/e2e/'];

/** Every *.test.ts under `roots` (files or directories), sorted. */
export function testFilesUnder(roots) {
  const files = [];
  for (const root of roots) {
    if (root.endsWith('.test.ts')) {
      files.push(root);
      continue;
    }
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.test.ts')) files.push(join(entry.parentPath ?? entry.path, entry.name));
    }
  }
  return files.sort();
}

function forbiddenName(specifier) {
  const name = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  return UNIT_FORBIDDEN.find((entry) => (entry.endsWith('/') ? name.startsWith(entry) : name === entry || name.startsWith(`${entry}/`)));
}

// Statements, not a parser: loading the TypeScript compiler would cost more than the
// unit suite. Comments go first; `import type` / `export type` are erased at run time.
const STATIC = /(?:^|[;}\n])\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g;
const DYNAMIC = /\bimport(?:\.meta\.resolve)?\(\s*['"]([^'"]+)['"]/g;

/** The modules `file` loads when it runs (and those it hands a child by import.meta.resolve). */
function runtimeSpecifiers(file) {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const specifiers = [];
  for (const [, typeOnly, specifier] of text.matchAll(STATIC)) if (!typeOnly) specifiers.push(specifier);
  for (const [, specifier] of text.matchAll(DYNAMIC)) specifiers.push(specifier);
  return specifiers;
}

/** The repository file a relative specifier names (`./x.js` is `./x.ts` in the sources), or undefined. */
function resolveLocal(from, specifier) {
  const target = resolve(dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target.replace(/\.mjs$/, '.mts'), target]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Why `file` is not a unit test: the chain of imports that reaches a forbidden
 * module or a test harness, or undefined when it reaches none.
 */
export function edgeReachedBy(file, seen = new Map()) {
  const start = resolve(file);
  const walk = (current, chain) => {
    if (seen.has(current)) return seen.get(current);
    seen.set(current, undefined); // a cycle reaches nothing new
    let found;
    for (const specifier of runtimeSpecifiers(current)) {
      if (specifier.startsWith('.')) {
        const target = resolveLocal(current, specifier);
        if (target === undefined) continue;
        if (relative(REPO_ROOT, target).split(sep).join('/').startsWith('test/support/')) found = [...chain, relative(REPO_ROOT, target)];
        else if (/\.(ts|tsx|mts)$/.test(target)) found = walk(target, [...chain, relative(REPO_ROOT, target)]);
      } else if (forbiddenName(specifier)) {
        found = [...chain, specifier];
      }
      if (found) break;
    }
    seen.set(current, found);
    return found;
  };
  return walk(start, [relative(REPO_ROOT, start)]);
}

/** The test files under `roots` by suite. */
export function classifyTests(roots = ['src', 'test']) {
  const suites = { unit: [], integration: [], e2e: [] };
  const seen = new Map();
  for (const file of testFilesUnder(roots.map((root) => resolve(REPO_ROOT, root)))) {
    const path = relative(REPO_ROOT, file).split(sep).join('/');
    if (E2E_DIRS.some((dir) => path.startsWith(dir))) suites.e2e.push(path);
    else if (edgeReachedBy(file, seen) === undefined) suites.unit.push(path);
    else suites.integration.push(path);
  }
  return suites;
}
