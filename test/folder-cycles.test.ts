/**
 * No folder of src/ imports, directly or around a loop, a folder that imports
 * it back (scripts/folder-cycles.mjs, run by `npm run lint`): the checker finds
 * a cycle planted in a scratch tree, type-only imports included, and finds none
 * in src/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { folderCycles } from '../scripts/folder-cycles.mjs';
import { REPO_ROOT } from '../scripts/test-suites.mjs';

describe('folders without cycles', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'folder-cycles-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  async function tree(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmp, 'src-'));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  it('finds none in src/', () => {
    assert.deepEqual(folderCycles(join(REPO_ROOT, 'src')), []);
  });

  it('names a cycle closed by a type-only import, with the imports that close it', async () => {
    const root = await tree({
      'model/run.ts': "import type { Port } from '../runner/ports.js';\nexport type Run = { port: Port };\n",
      'runner/ports.ts': "import { type Run } from '../model/run.js';\nexport type Port = (run: Run) => void;\n",
      'runner/run.test.ts': "import '../model/run.js';\n",
    });
    assert.deepEqual(folderCycles(root), [
      {
        folders: ['model', 'runner'],
        imports: ['model -> runner: model/run.ts imports runner/ports.ts', 'runner -> model: runner/ports.ts imports model/run.ts'],
      },
    ]);
  });

  it('finds a loop through three folders and a dynamic import, and lets the top-level files import everything', async () => {
    const root = await tree({
      'a/x.ts': "export const x = () => import('../b/y.js');\n",
      'b/y.ts': "export { z } from '../c/z.js';\n",
      'c/z.ts': "import { errors } from '../errors.js';\nimport { x } from '../a/x.js';\nexport const z = [errors, x];\n",
      'errors.ts': 'export const errors = 1;\n',
      'main.ts': "import '../a/x.js';\nimport '../c/z.js';\n",
    });
    assert.deepEqual(
      folderCycles(root).map((c) => c.folders),
      [['a', 'b', 'c']],
    );
    assert.deepEqual(
      folderCycles(await tree({ 'a/x.ts': "import { e } from '../errors.js';\n", 'errors.ts': 'export const e = 1;\n', 'main.ts': "import './a/x.js';\n" })),
      [],
    );
  });
});
