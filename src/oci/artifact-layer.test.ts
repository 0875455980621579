import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ValidationError } from '../errors.js';
import { type ArtifactFile, packTree } from './artifact-layer.js';

/** Runs a program with `input` on stdin; resolves with its output whatever the exit code. */
function run(command: string, args: readonly string[], input: Buffer, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', TZ: 'UTC', LC_ALL: 'C' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

const LONG_PATH = `deep/${'d'.repeat(90)}/${'e'.repeat(60)}/manifest.yaml`; // > 100: ustar prefix + name
const VERY_LONG_PATH = `deep/${'x'.repeat(200)}/${'y'.repeat(120)}.yaml`; // > 255: a pax header
const UTF8_PATH = 'apps/café/ingress-ü.yaml'; // non-ASCII: a pax header

function sampleFiles(): ArtifactFile[] {
  return [
    { path: 'clusters/development/kustomization.yaml', content: Buffer.from('resources:\n  - flux\n') },
    { path: 'base/apps/kustomization.yaml', content: Buffer.from('namespace: tcr\n') },
    { path: 'scripts/render.sh', content: Buffer.from('#!/bin/sh\necho ok\n'), executable: true },
    { path: 'assets/logo.bin', content: Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 0x0a, 0x0d]) },
    { path: 'empty.txt', content: Buffer.alloc(0) },
    { path: LONG_PATH, content: Buffer.from('long: true\n') },
    { path: VERY_LONG_PATH, content: Buffer.from('very-long: true\n') },
    { path: UTF8_PATH, content: Buffer.from('host: café.example\n') },
  ];
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function walk(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath ?? entry.path, entry.name);
    out.set(relative(dir, full), await readFile(full));
  }
  return out;
}

describe('packTree', () => {
  it('gives byte-identical output for the same files in any order', async () => {
    const files = sampleFiles();
    const a = await packTree(files);
    const b = await packTree([...files].reverse());
    const c = await packTree([files[3], files[0], files[6], files[1], files[7], files[2], files[5], files[4]] as ArtifactFile[]);
    assert.equal(sha256(a), sha256(b));
    assert.ok(a.equals(c));
  });

  it('packs a FileTree exactly like the same files given as ArtifactFiles', async () => {
    const tree = new Map([
      ['b/two.yaml', 'two: 2\n'],
      ['a/one.yaml', 'one: 1\n'],
    ]);
    const fromTree = await packTree(tree);
    const fromFiles = await packTree([
      { path: 'a/one.yaml', content: Buffer.from('one: 1\n') },
      { path: 'b/two.yaml', content: Buffer.from('two: 2\n') },
    ]);
    assert.ok(fromTree.equals(fromFiles));
  });

  it('changes when a file, a mode or the mtime changes', async () => {
    const base = await packTree([{ path: 'a.yaml', content: Buffer.from('a\n') }]);
    assert.notEqual(sha256(base), sha256(await packTree([{ path: 'a.yaml', content: Buffer.from('b\n') }])));
    assert.notEqual(sha256(base), sha256(await packTree([{ path: 'a.yaml', content: Buffer.from('a\n'), executable: true }])));
    assert.notEqual(sha256(base), sha256(await packTree([{ path: 'a.yaml', content: Buffer.from('a\n') }], { mtime: 1_700_000_000 })));
    assert.ok(base.equals(await packTree([{ path: 'a.yaml', content: Buffer.from('a\n') }], { mtime: new Date(0) })));
  });

  it('writes a gzip header without timestamp or name and a POSIX ustar archive', async () => {
    const layer = await packTree(sampleFiles());
    assert.deepEqual([...layer.subarray(0, 3)], [0x1f, 0x8b, 0x08], 'gzip, deflate');
    assert.equal(layer[3], 0, 'no FNAME, FCOMMENT or FEXTRA');
    assert.deepEqual([...layer.subarray(4, 8)], [0, 0, 0, 0], 'MTIME is zero');
    assert.equal(layer[9], 0xff, 'OS is "unknown" on every platform');
    const tar = gunzipSync(layer);
    assert.equal(tar.length % 512, 0);
    assert.equal(tar.subarray(257, 263).toString('latin1'), 'ustar\0');
    assert.equal(tar.subarray(263, 265).toString('latin1'), '00');
    // The archive ends with two zero blocks.
    assert.ok(tar.subarray(tar.length - 1024).every((byte) => byte === 0));
  });

  it('is listed by the system tar: sorted, directories first, root-owned, fixed modes and time', async () => {
    const layer = await packTree(sampleFiles());
    const listing = await run('tar', ['--numeric-owner', '--quoting-style=literal', '-tvzf', '-'], layer);
    assert.equal(listing.code, 0, listing.stderr);
    const lines = listing.stdout.trim().split('\n');
    const names = lines.map((line) => line.split(/\s+/).slice(5).join(' '));
    assert.deepEqual(names, [
      'apps/',
      'apps/café/',
      UTF8_PATH,
      'assets/',
      'assets/logo.bin',
      'base/',
      'base/apps/',
      'base/apps/kustomization.yaml',
      'clusters/',
      'clusters/development/',
      'clusters/development/kustomization.yaml',
      'deep/',
      `deep/${'d'.repeat(90)}/`,
      `deep/${'d'.repeat(90)}/${'e'.repeat(60)}/`,
      LONG_PATH,
      `deep/${'x'.repeat(200)}/`,
      VERY_LONG_PATH,
      'empty.txt',
      'scripts/',
      'scripts/render.sh',
    ]);
    for (const line of lines) {
      const [mode, owner, , date, time] = line.split(/\s+/);
      assert.equal(owner, '0/0', line);
      assert.equal(`${date} ${time}`, '1970-01-01 00:00', line);
      const name = line.split(/\s+/).slice(5).join(' ');
      const expected = name.endsWith('/') ? 'drwxr-xr-x' : name === 'scripts/render.sh' ? '-rwxr-xr-x' : '-rw-r--r--';
      assert.equal(mode, expected, line);
    }
  });

  it('uses the given mtime for every entry', async () => {
    const layer = await packTree([{ path: 'a/b.yaml', content: Buffer.from('b\n') }], { mtime: new Date('2024-05-06T07:08:09.999Z') });
    const listing = await run('tar', ['--full-time', '-tvzf', '-'], layer);
    assert.equal(listing.code, 0, listing.stderr);
    for (const line of listing.stdout.trim().split('\n')) assert.match(line, / 2024-05-06 07:08:09 /);
  });

  it('round-trips every byte through the system tar', async () => {
    const files = sampleFiles();
    const dir = await mkdtemp(join(tmpdir(), 'artifact-layer-'));
    try {
      const extracted = await run('tar', ['-xzf', '-', '-C', dir], await packTree(files));
      assert.equal(extracted.code, 0, extracted.stderr);
      const onDisk = await walk(dir);
      assert.deepEqual([...onDisk.keys()].sort(), files.map((f) => f.path).sort());
      for (const file of files) assert.ok(onDisk.get(file.path)?.equals(Buffer.from(file.content)), file.path);
      assert.equal((await stat(join(dir, 'scripts/render.sh'))).mode & 0o777, 0o755);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('packs an empty tree as an empty archive', async () => {
    const listing = await run('tar', ['-tzf', '-'], await packTree([]));
    assert.equal(listing.code, 0, listing.stderr);
    assert.equal(listing.stdout, '');
  });

  it('refuses paths that could escape the repository or collide', async () => {
    const bad: ArtifactFile[][] = [
      [{ path: '../outside.yaml', content: Buffer.from('x') }],
      [{ path: '/etc/passwd', content: Buffer.from('x') }],
      [{ path: 'a/../../b', content: Buffer.from('x') }],
      [{ path: '.git/config', content: Buffer.from('x') }],
      [{ path: 'sub/.git/hooks/pre-commit', content: Buffer.from('x') }],
      [{ path: 'a\\b', content: Buffer.from('x') }],
      [{ path: '', content: Buffer.from('x') }],
      [{ path: '.', content: Buffer.from('x') }],
      [{ path: 'dir/', content: Buffer.from('x') }],
      [
        { path: 'same.yaml', content: Buffer.from('1') },
        { path: 'same.yaml', content: Buffer.from('2') },
      ],
      [
        { path: 'a', content: Buffer.from('file') },
        { path: 'a/b', content: Buffer.from('inside') },
      ],
    ];
    for (const files of bad) await assert.rejects(packTree(files), ValidationError, JSON.stringify(files.map((f) => f.path)));
    await assert.rejects(packTree([], { mtime: -1 }), ValidationError);
  });
});
