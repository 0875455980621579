// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    files: ['src/model/**', 'src/gitops/**', 'src/graph/**', 'src/sealing/**', 'src/verify/**', 'src/fleet/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['node:fs', 'node:fs/promises', 'node:child_process', 'node:net', 'node:http', 'node:https', 'fs', 'child_process', 'pg', '@electric-sql/pglite', '@kubernetes/client-node'],
        patterns: ['**/git/**', '**/kubernetes/**', '**/db/**', '**/http/**', '**/runner/**', '**/service/**'],
      }],
    },
  },
);
