/**
 * Every folder of src/ has a layer rule in eslint.config.js: an import against
 * the rings fails `npm run lint`. Each probe is linted as if it sat in that
 * folder, through ESLint's own API with the repository's configuration.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { REPO_ROOT } from '../scripts/test-suites.mjs';

/** Per folder, one import its rule refuses (the reason in a word) — and the same folder importing the pure core is fine. */
const REFUSED: Readonly<Record<string, string>> = {
  model: '../git/cli-git-remote.js',
  run: '../service/run-service.js',
  gitops: '../kubernetes/kube-job-executor.js',
  graph: '../db/pg-run-store.js',
  sealing: '../http/create-http-app.js',
  verify: '../runner/run-frame.js',
  fleet: '../workspace/verify-work-tree.js',
  service: '../db/pg-run-store.js',
  runner: '../service/run-service.js',
  http: '../runner/run-frame.js',
  db: '../workspace/verify-work-tree.js',
  git: '../runner/run-frame.js',
  kubernetes: '../http/create-http-app.js',
  kustomize: '../service/run-service.js',
  local: '../http/create-http-app.js',
  oci: '../runner/run-frame.js',
  delivery: '../runner/run-frame.js',
  'run-contract': '../git/cli-git-remote.js',
  workspace: '../service/run-service.js',
  sources: '../runner/run-frame.js',
  embedded: '../http/create-http-app.js',
  cli: '../db/pg-run-store.js',
  process: '../git/cli-git-remote.js',
};

async function restrictedImports(folder: string, from: string): Promise<number> {
  const eslint = new ESLint({ cwd: REPO_ROOT });
  const [result] = await eslint.lintText(`import { probe } from '${from}';\nexport const used = probe;\n`, {
    filePath: join(REPO_ROOT, 'src', folder, 'layer-probe.ts'),
  });
  return result!.messages.filter((message) => message.ruleId === 'no-restricted-imports').length;
}

describe('the layer rules', () => {
  it('name every folder of src/', () => {
    const folders = readdirSync(join(REPO_ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    assert.deepEqual(Object.keys(REFUSED).sort(), folders);
  });

  for (const [folder, from] of Object.entries(REFUSED)) {
    it(`refuse ${from} in src/${folder}/, and allow the model`, async () => {
      assert.equal(await restrictedImports(folder, from), 1, `${folder} may import ${from}`);
      assert.equal(await restrictedImports(folder, '../model/defaults.js'), 0, `${folder} may not import the model`);
    });
  }
});
