/**
 * The rule that splits the suite (scripts/test-suites.mjs) and the guard of the
 * fast path (scripts/unit-entry.mjs): a test that reaches a child process, a
 * socket, a database or a harness is never run as a unit test, by its imports
 * or, when the imports cannot tell, by the guard failing it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { classifyTests, edgeReachedBy, REPO_ROOT, testFilesUnder } from '../../scripts/test-suites.mjs';

/** Runs the unit entry on `files` as `npm run test:unit` does. @returns its exit code and output */
function runUnitEntry(files: readonly string[]): Promise<{ code: number | null; output: string }> {
  // Not a subtest of this run: node:test would see its own marker and skip the files.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', join(REPO_ROOT, 'scripts/unit-entry.mjs')], {
      cwd: REPO_ROOT,
      env: { ...env, UNIT_TEST_FILES: files.map((file) => relative(REPO_ROOT, file)).join('\n') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('the test suites', { timeout: 120_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'test-suites-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('puts every test in exactly one suite: pure ones in unit, edges in integration, the browser in e2e', () => {
    const suites = classifyTests();
    const all = testFilesUnder([join(REPO_ROOT, 'src'), join(REPO_ROOT, 'test')]).map((file) => relative(REPO_ROOT, file));
    assert.deepEqual([...suites.unit, ...suites.integration, ...suites.e2e].sort(), all);
    for (const pure of ['src/errors.test.ts', 'src/model/repository-url.test.ts', 'src/graph/topo-sort.test.ts']) assert.ok(suites.unit.includes(pure), pure);
    for (const edge of [
      'src/db/pg-run-store.test.ts',
      'src/git/cli-git-remote.test.ts',
      'src/kustomize/kubectl-kustomize.test.ts',
      'test/integration/runner.test.ts',
    ]) {
      assert.ok(suites.integration.includes(edge), edge);
    }
    assert.deepEqual(suites.e2e, ['test/e2e/dashboard.test.ts', 'test/e2e/fleet-upgrade.test.ts', 'test/e2e/operator-views.test.ts']);
    // The dashboard's view logic and the golden renders are pure, wherever they sit.
    for (const pure of ['test/ui/start-form.test.ts', 'test/golden/golden-render.test.ts']) assert.ok(suites.unit.includes(pure), pure);
  });

  it('follows imports through the repository to the edge, and ignores type-only imports', async () => {
    await writeFile(join(dir, 'socket.ts'), "import { connect } from 'node:net';\nexport const open = connect;\n");
    await writeFile(join(dir, 'middle.ts'), "export { open } from './socket.js';\n");
    await writeFile(join(dir, 'reaches.test.ts'), "import {\n  open,\n} from './middle.js';\nvoid open;\n");
    await writeFile(
      join(dir, 'types-only.test.ts'),
      "import type { Client } from 'pg';\nexport type { Pool } from 'pg';\n// import { spawn } from 'node:child_process';\nexport type C = Client;\n",
    );
    assert.deepEqual(edgeReachedBy(join(dir, 'reaches.test.ts'))?.slice(-2), [relative(REPO_ROOT, join(dir, 'socket.ts')), 'node:net']);
    assert.equal(edgeReachedBy(join(dir, 'types-only.test.ts')), undefined);
  });

  it('fails a unit test that starts a child process its imports did not show, and runs a pure one', async () => {
    // The child process module reached through a computed import: no rule on imports sees it.
    await writeFile(
      join(dir, 'hidden-spawn.test.ts'),
      "import { it } from 'node:test';\nconst name = ['node', 'child_process'].join(':');\nit('spawns', async () => {\n  const cp = await import(name);\n  cp.spawnSync('true');\n});\n",
    );
    await writeFile(
      join(dir, 'pure.test.ts'),
      "import { it } from 'node:test';\nimport assert from 'node:assert/strict';\nit('adds', () => assert.equal(1 + 1, 2));\n",
    );
    const hidden = await runUnitEntry([join(dir, 'hidden-spawn.test.ts')]);
    assert.notEqual(hidden.code, 0, hidden.output);
    assert.match(hidden.output, /a unit test may not start a child process/);
    const pure = await runUnitEntry([join(dir, 'pure.test.ts')]);
    assert.equal(pure.code, 0, pure.output);
    assert.match(pure.output, /# pass 1/);
  });
});
