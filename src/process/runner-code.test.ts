import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUNNER_CODE_MANIFEST, readRunnerCodeManifest } from './runner-code.js';

async function inDir(manifest: string | undefined, test: (dir: string) => void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'runner-code-test-'));
  try {
    if (manifest !== undefined) await writeFile(join(dir, RUNNER_CODE_MANIFEST), manifest);
    test(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("the bundle's runner code manifest", () => {
  it('is absent from the sources: the bin starts the ES modules', async () => {
    await inDir(undefined, (dir) => assert.equal(readRunnerCodeManifest(dir), undefined));
  });

  it('names the script and, once trained, its cache', async () => {
    await inDir('{"script":"runner-ABC123.cjs"}', (dir) => assert.deepEqual(readRunnerCodeManifest(dir), { script: 'runner-ABC123.cjs' }));
    await inDir('{"script":"runner-ABC123.cjs","codeCache":"runner-ABC123.cjs.cache"}', (dir) =>
      assert.deepEqual(readRunnerCodeManifest(dir), { script: 'runner-ABC123.cjs', codeCache: 'runner-ABC123.cjs.cache' }),
    );
  });

  it('names only files beside it: no path leads the bin to code elsewhere', async () => {
    for (const [field, name] of [
      ['script', '../runner.cjs'],
      ['script', '/tmp/runner.cjs'],
      ['script', 'sub/runner.cjs'],
      ['script', '.hidden.cjs'],
      ['codeCache', '../../tmp/evil.cache'],
      ['codeCache', 42],
    ] as const) {
      const manifest = { script: 'runner-ABC.cjs', [field]: name };
      await inDir(JSON.stringify(manifest), (dir) => assert.throws(() => readRunnerCodeManifest(dir), new RegExp(`"${field}" must name a file beside it`)));
    }
  });
});
