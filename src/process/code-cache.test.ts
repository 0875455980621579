import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeCacheOf, compileModule, runModule } from './code-cache.js';

/** A module as esbuild writes one: a `#!` line, CommonJS globals, functions compiled only when called. */
const SOURCE = [
  '#!/usr/bin/env node',
  "const { basename } = require('node:path');",
  'function later(n) { return n * 2; }',
  'globalThis.__codeCacheProbe = { file: basename(__filename), dir: __dirname, self: module.exports === exports, later: later(21) };',
  "if (globalThis.__codeCacheThrow) throw new Error('from line 5');",
].join('\n');

type Probe = { file: string; dir: string; self: boolean; later: number };
const probe = globalThis as { __codeCacheProbe?: Probe; __codeCacheThrow?: boolean };
/** What the module's last run left (read afresh: a run changes it behind TypeScript's back). */
const probed = (): Probe | undefined => probe.__codeCacheProbe;

async function withScript(source: string, test: (filename: string) => Promise<void> | void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'code-cache-test-'));
  try {
    const filename = join(dir, 'runner-TEST.cjs');
    await writeFile(filename, source);
    await test(filename);
  } finally {
    delete probe.__codeCacheProbe;
    delete probe.__codeCacheThrow;
    await rm(dir, { recursive: true, force: true });
  }
}

describe('a CommonJS module from a code cache', () => {
  it('runs as Node runs the file: its own require, module, __filename and __dirname, and V8 takes the cache it made', async () => {
    await withScript(SOURCE, (filename) => {
      const first = compileModule(SOURCE, filename);
      assert.equal(first.cache, 'none');
      runModule(first, filename);
      assert.deepEqual(probed(), { file: 'runner-TEST.cjs', dir: join(filename, '..'), self: true, later: 42 });
      const cache = codeCacheOf(first);
      delete probe.__codeCacheProbe;

      const second = compileModule(SOURCE, filename, cache);
      assert.equal(second.cache, 'accepted');
      runModule(second, filename);
      assert.equal(probed()?.later, 42);
    });
  });

  it('runs from the source where V8 rejects a cache made of another script: a wrong cache costs time, not behaviour', async () => {
    const other = `${SOURCE}\n// another build`;
    await withScript(SOURCE, (filename) => {
      const foreign = codeCacheOf(compileModule(other, filename));
      const compiled = compileModule(SOURCE, filename, foreign);
      assert.equal(compiled.cache, 'rejected');
      runModule(compiled, filename);
      assert.equal(probed()?.later, 42);
    });
  });

  it('V8 checks no more of the source than its length: why a cache is named after the script it was made of', async () => {
    const sameLength = SOURCE.replace('n * 2', 'n + 2');
    assert.equal(sameLength.length, SOURCE.length);
    await withScript(SOURCE, (filename) => {
      const cache = codeCacheOf(compileModule(sameLength, filename));
      assert.equal(compileModule(SOURCE, filename, cache).cache, 'accepted');
    });
  });

  it("keeps the source's line numbers in stack traces, the #! line included", async () => {
    await withScript(SOURCE, (filename) => {
      probe.__codeCacheThrow = true;
      assert.throws(
        () => runModule(compileModule(SOURCE, filename), filename),
        (error: Error) => error.message === 'from line 5' && (error.stack ?? '').includes(`${filename}:5:`),
      );
    });
  });
});
