import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureLocalSealingKey } from './local-sealing-key.js';

describe('the local sealing key', () => {
  const dirs: string[] = [];
  const dir = async (): Promise<string> => {
    const made = await mkdtemp(join(tmpdir(), 'gs-sealing-key-'));
    dirs.push(made);
    return made;
  };
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('is generated once in a 0700 directory, its private key 0600, and reused on the next start', async () => {
    const sealing = join(await dir(), 'sealing');
    const first = await ensureLocalSealingKey(sealing);
    assert.equal(first.created, true);
    assert.equal((await stat(sealing)).mode & 0o777, 0o700);
    assert.equal((await stat(first.privateKeyFile)).mode & 0o777, 0o600);
    const certificate = new X509Certificate(await readFile(first.certificateFile));
    assert.match(certificate.subject, /CN=sealed-secret/);
    assert.ok(certificate.checkPrivateKey(createPrivateKey(await readFile(first.privateKeyFile))));
    const second = await ensureLocalSealingKey(sealing);
    assert.deepEqual(second, { ...first, created: false });
  });

  it('ends 0600 when it writes over a key file others could read (a start that stopped before the certificate)', async () => {
    const sealing = await dir();
    await writeFile(join(sealing, 'tls.key'), 'half-written\n', { mode: 0o644 });
    await chmod(join(sealing, 'tls.key'), 0o644);
    const key = await ensureLocalSealingKey(sealing);
    assert.equal(key.created, true);
    assert.equal((await stat(key.privateKeyFile)).mode & 0o777, 0o600);
  });

  it('makes a kept key file that others could read (copied by hand) 0600, and keeps the key', async () => {
    const sealing = await dir();
    const made = await ensureLocalSealingKey(sealing);
    await chmod(made.privateKeyFile, 0o644);
    const kept = await ensureLocalSealingKey(sealing);
    assert.equal(kept.created, false);
    assert.equal(kept.privateKeyPem, made.privateKeyPem);
    assert.equal((await stat(kept.privateKeyFile)).mode & 0o777, 0o600);
  });

  it('fails with the read error, and replaces no key, when a file cannot be read (anything but a missing file)', async () => {
    const sealing = await dir();
    await writeFile(join(sealing, 'tls.key'), 'the operator key\n', { mode: 0o600 });
    await mkdir(join(sealing, 'tls.crt'));
    await assert.rejects(ensureLocalSealingKey(sealing), { code: 'EISDIR', syscall: 'read' });
    assert.equal(await readFile(join(sealing, 'tls.key'), 'utf8'), 'the operator key\n');
    assert.deepEqual((await readdir(sealing)).sort(), ['tls.crt', 'tls.key']);
  });
});
