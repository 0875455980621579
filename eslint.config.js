// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Folders that talk to the world: processes, files, network, database, Kubernetes. */
const EDGES = ['**/process/**', '**/git/**', '**/kubernetes/**', '**/db/**', '**/http/**', '**/kustomize/**', '**/oci/**', '**/local/**', '**/delivery/*-forge.js'];
/**
 * Adapters that combine edges for one purpose: work-tree operations (render,
 * verify, upgrade a checked-out copy), git-backed sources of the service's read
 * ports, and the embedded mode. Only composition roots and the runner use them.
 */
const ADAPTERS = ['**/workspace/**', '**/sources/**', '**/embedded/**'];
/** The application layer: the run lifecycle and the run itself. */
const APPLICATION = ['**/runner/**', '**/service/**'];
/** Edges implement the application's ports (run/ports.ts, service/*-store.ts …) but never call its logic. */
const APPLICATION_EXCEPT_PORTS = ['**/runner/run-*.js', '**/service/*-service.js', '**/service/run-monitor.js'];

function without(list, ...drop) {
  return list.filter((entry) => !drop.includes(entry));
}

/** A lint block: files in `files` may not import modules matching `patterns` or packages in `paths`. */
function layer(files, patterns, paths) {
  return {
    files,
    ignores: ['**/*.test.ts', '**/*.contract.ts'],
    rules: { 'no-restricted-imports': ['error', { paths, patterns: [...new Set(patterns)] }] },
  };
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'platform/', 'ui/dist/', '.gitops-scaffolder/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain-JavaScript scripts run on Node; TypeScript files get their globals from @types/node.
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  {
    // The pure core never reaches an edge: no process, file system, network or child process.
    files: ['src/model/**', 'src/run/**', 'src/gitops/**', 'src/graph/**', 'src/sealing/**', 'src/verify/**', 'src/fleet/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['node:fs', 'node:fs/promises', 'node:child_process', 'node:net', 'node:http', 'node:https', 'fs', 'child_process', 'pg', '@electric-sql/pglite', '@kubernetes/client-node'],
        patterns: [...EDGES, ...APPLICATION, ...ADAPTERS, '**/cli/**', '**/run-contract/**'],
      }],
    },
  },
  // Each layer around the core names what it may not reach; only the composition
  // roots (src/main.ts, src/cli.ts, src/runner-cli.ts, src/cli/) and the adapters wire edges together.
  layer(['src/service/**'], [...EDGES, ...ADAPTERS, '**/runner/**'], ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/runner/**'], [...EDGES, '**/service/*-service.js', '**/service/*-executor.js'], ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/http/**'], without(EDGES, '**/http/**').concat(['**/runner/**', ...ADAPTERS]), ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'node:child_process']),
  layer(['src/db/**'], without(EDGES, '**/db/**').concat(APPLICATION_EXCEPT_PORTS, ADAPTERS), ['@kubernetes/client-node', 'fastify']),
  // Starting children is all it does: it knows no other edge and no part of the application.
  layer(['src/process/**'], without(EDGES, '**/process/**').concat(APPLICATION, ADAPTERS), ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/git/**'], without(EDGES, '**/git/**', '**/process/**').concat(APPLICATION_EXCEPT_PORTS, ADAPTERS), ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/kubernetes/**'], without(EDGES, '**/kubernetes/**').concat(['**/http/**', ...ADAPTERS]), ['pg', '@electric-sql/pglite', 'fastify']),
  layer(['src/kustomize/**'], without(EDGES, '**/kustomize/**', '**/process/**').concat(APPLICATION, ADAPTERS), ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/local/**'], without(EDGES, '**/local/**', '**/git/**').concat(APPLICATION_EXCEPT_PORTS, [...ADAPTERS, '**/http/**']), ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/oci/**'], without(EDGES, '**/oci/**', '**/git/**').concat(APPLICATION, ADAPTERS), ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  // Pull/merge-request delivery speaks to forges (its own *-forge clients) and nothing else of the world.
  layer(['src/delivery/**'], without(EDGES, '**/delivery/*-forge.js').concat(APPLICATION, ADAPTERS, ['**/run-contract/**', '**/cli/**']), ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  // What the service and a runner agree on: types, schemas, the lease file; no edge and no logic of either side.
  layer(['src/run-contract/**'], [...EDGES, ...APPLICATION, ...ADAPTERS, '**/cli/**'], ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify', 'node:child_process']),
  // Adapters: a work tree (git, kustomize, the core) or a read port of the service; never the service's logic, HTTP or the database.
  layer(['src/workspace/**'], ['**/http/**', '**/db/**', '**/kubernetes/**', '**/oci/**', '**/sources/**', '**/embedded/**', '**/cli/**', ...APPLICATION], ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/sources/**'], ['**/http/**', '**/db/**', '**/kubernetes/**', '**/embedded/**', '**/cli/**', '**/runner/**', ...APPLICATION_EXCEPT_PORTS], ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  layer(['src/embedded/**'], ['**/http/**', '**/db/**', '**/kubernetes/**', '**/cli/**', '**/service/*-service.js'], ['pg', '@electric-sql/pglite', '@kubernetes/client-node', 'fastify']),
  // The CLI's commands run without the service: no HTTP, database or service logic.
  layer(['src/cli/**'], ['**/http/**', '**/db/**', '**/service/**', '**/runner/**'], ['pg', '@electric-sql/pglite', 'fastify']),
);
