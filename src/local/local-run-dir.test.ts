import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalRunDirs } from './local-run-dir.js';

describe('LocalRunDirs.prepare', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('makes the run directory private to the service user (it holds the clone, the result and the output) and empties it of an earlier start', async () => {
    const data = await mkdtemp(join(tmpdir(), 'gs-run-dir-'));
    dirs.push(data);
    const runs = new LocalRunDirs(data);
    await runs.prepare('run-1');
    assert.equal((await stat(runs.runDirOf('run-1'))).mode & 0o777, 0o700);
    assert.equal((await stat(join(data, 'runs'))).mode & 0o777, 0o700);

    await writeFile(runs.resultFileOf('run-1'), '{}\n');
    await writeFile(runs.leaseFileOf('run-1'), '{}\n');
    await writeFile(runs.outputFileOf('run-1'), 'old output\n');
    await mkdir(join(runs.workDirOf('run-1'), 'clone'), { recursive: true });
    await runs.prepare('run-1');
    assert.deepEqual(await readdir(runs.runDirOf('run-1')), []);
  });
});
