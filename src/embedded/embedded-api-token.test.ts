import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
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
