import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ensureEmbeddedApiToken, embeddedStartupNotice } from './embedded-api-token.js';

describe('the embedded API token', () => {
  const dirs: string[] = [];
  const dir = async (): Promise<string> => {
    const made = await mkdtemp(join(tmpdir(), 'embedded-token-'));
    dirs.push(made);
    return made;
  };
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('is generated once, kept 0600, and the same on the next start', async () => {
    const data = await dir();
    const first = await ensureEmbeddedApiToken(data);
    assert.equal(first.created, true);
    assert.match(first.token, /^[A-Za-z0-9_-]{32}$/);
    assert.equal((await stat(first.file)).mode & 0o777, 0o600);
    const second = await ensureEmbeddedApiToken(data);
    assert.deepEqual(second, { ...first, created: false });
  });

  it('replaces an unusable file rather than accepting a short token', async () => {
    const data = await dir();
    await writeFile(join(data, 'api-token'), 'short\n');
    const token = await ensureEmbeddedApiToken(data);
    assert.equal(token.created, true);
    assert.equal((await readFile(token.file, 'utf8')).trim(), token.token);
  });

  it('fails with the read error, and writes nothing, when the token file cannot be read (anything but a missing file)', async () => {
    // A directory where the file should be: the read fails with EISDIR. A token generated in its
    // place would fail later, at the write, with an error of its own (syscall open or rename).
    const data = await dir();
    await mkdir(join(data, 'api-token'));
    await assert.rejects(ensureEmbeddedApiToken(data), { code: 'EISDIR', syscall: 'read' });
    assert.ok((await stat(join(data, 'api-token'))).isDirectory());
    assert.deepEqual(await readdir(data), ['api-token']);
  });

  it('does not replace a token file it could not read, even one it could write', async () => {
    // Past 2 GiB readFile refuses (ERR_FS_FILE_TOO_LARGE) though the file is writable; sparse, so it takes no space.
    // Root reads a mode-0200 file, so this stands for an unreadable file wherever the tests run.
    const data = await dir();
    const file = join(data, 'api-token');
    await writeFile(file, '');
    await truncate(file, 2 ** 31 + 1);
    await assert.rejects(ensureEmbeddedApiToken(data), { code: 'ERR_FS_FILE_TOO_LARGE' });
    assert.equal((await stat(file)).size, 2 ** 31 + 1);
    assert.deepEqual(await readdir(data), ['api-token']);
    await rm(file);
    if (process.getuid?.() !== 0) {
      await writeFile(file, 'kept-by-the-operator-0123456789\n', { mode: 0o200 });
      await assert.rejects(ensureEmbeddedApiToken(data), { code: 'EACCES' });
      await chmod(file, 0o600);
      assert.equal(await readFile(file, 'utf8'), 'kept-by-the-operator-0123456789\n');
    }
  });

  it('leaves the token file 0600 when it replaces or keeps one that others could read', async () => {
    const replaced = await dir();
    await writeFile(join(replaced, 'api-token'), 'short\n', { mode: 0o644 });
    await chmod(join(replaced, 'api-token'), 0o644);
    const fresh = await ensureEmbeddedApiToken(replaced);
    assert.equal(fresh.created, true);
    assert.equal((await readFile(fresh.file, 'utf8')).trim(), fresh.token);
    assert.equal((await stat(fresh.file)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(replaced), ['api-token']);

    const kept = await dir();
    await writeFile(join(kept, 'api-token'), 'made-by-hand-0123456789abcdef\n', { mode: 0o644 });
    await chmod(join(kept, 'api-token'), 0o644);
    const existing = await ensureEmbeddedApiToken(kept);
    assert.deepEqual([existing.created, existing.token], [false, 'made-by-hand-0123456789abcdef']);
    assert.equal((await stat(existing.file)).mode & 0o777, 0o600);
  });

  it('prints the dashboard URL always, the token only when it was just generated', async () => {
    const token = await ensureEmbeddedApiToken(await dir());
    const first = embeddedStartupNotice('http://127.0.0.1:8080/ui/', token, true);
    assert.match(first, /dashboard at http:\/\/127\.0\.0\.1:8080\/ui\//);
    assert.ok(first.includes(token.token));
    const later = embeddedStartupNotice('http://127.0.0.1:8080/ui/', { ...token, created: false }, true);
    assert.ok(!later.includes(token.token));
    assert.ok(later.includes(token.file));
    assert.ok(!embeddedStartupNotice('http://x/ui/', undefined, true).includes('kept in'));
  });

  it('never prints a generated token when its reader is not a terminal: names the file instead', async () => {
    const token = await ensureEmbeddedApiToken(await dir());
    const piped = embeddedStartupNotice('http://127.0.0.1:8080/ui/', token, false);
    assert.ok(!piped.includes(token.token), piped);
    assert.ok(piped.includes(token.file), piped);
  });
});
