import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tailLines } from './output-file.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'output-file-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const line of lines) all.push(line);
  return all;
}

describe('tailLines', () => {
  it('follows the file as it grows, and after the writer is done yields what it wrote last, a line without a newline too', async () => {
    const path = join(dir, 'growing.log');
    await writeFile(path, 'one\r\ntw');
    let done = false;
    const seen: string[] = [];
    const reading = (async () => {
      for await (const line of tailLines(path, { until: () => done })) {
        seen.push(line);
        // Each line read lets the writer go on: the reader follows, it does not read once.
        if (line === 'one') await appendFile(path, 'o\nthr');
        if (line === 'two') {
          await appendFile(path, 'ee\nlast, unterminated');
          done = true;
        }
      }
    })();
    await reading;
    assert.deepEqual(seen, ['one', 'two', 'three', 'last, unterminated']);
  });

  it('reads a multi-byte character split across writes whole', async () => {
    const path = join(dir, 'utf8.log');
    const bytes = Buffer.from('grüße\n', 'utf8');
    // 'first' is read with the first byte of ü and before the rest is written.
    await writeFile(path, Buffer.concat([Buffer.from('first\n'), bytes.subarray(0, 3)]));
    let done = false;
    const seen: string[] = [];
    for await (const line of tailLines(path, { until: () => done })) {
      seen.push(line);
      if (line === 'first') {
        await appendFile(path, bytes.subarray(3));
        done = true;
      }
    }
    assert.deepEqual(seen, ['first', 'grüße']);
  });

  it('yields nothing for a file that does not exist', async () => {
    assert.deepEqual(await collect(tailLines(join(dir, 'absent.log'), { until: () => true })), []);
  });
});
