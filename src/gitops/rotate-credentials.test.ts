/**
 * rotateCredentials in memory: moving to a new sealing key keeps every value
 * (proved with an independent decrypt: openssl's RSA-OAEP and a hand-parsed
 * frame, labels computed here from the manifests), and fresh values come with
 * the Job that changes them where the database keeps them.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { platformDir } from '../package-paths.js';
import { reencryptedData } from '../sealing/reencrypt.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { renderCluster } from './render-cluster.js';
import { memoryRepoReader } from './repo-reader.js';
import { rotateCredentials, type ControllerReencrypt } from './rotate-credentials.js';

const oldKey = createTestCertificate();
const newKey = createTestCertificate();
const oldCert = parseSealingCertificate(oldKey.certificatePem);
const newCert = parseSealingCertificate(newKey.certificatePem);

/**
 * Opens one sealed value without the product's code: the frame is
 * uint16be(len) || RSA-OAEP(SHA-256, label)(session key) || AES-256-GCM(zero nonce) || tag(16),
 * the RSA part is decrypted by the openssl CLI.
 */
function independentDecrypt(privateKey: KeyObject, label: string, ciphertext: string): string {
  const bytes = Buffer.from(ciphertext, 'base64');
  const rsaLength = bytes.readUInt16BE(0);
  const dir = mkdtempSync(join(tmpdir(), 'oaep-'));
  try {
    writeFileSync(join(dir, 'key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(join(dir, 'in.bin'), bytes.subarray(2, 2 + rsaLength));
    const args = [
      'pkeyutl',
      '-decrypt',
      '-inkey',
      join(dir, 'key.pem'),
      '-in',
      join(dir, 'in.bin'),
      '-pkeyopt',
      'rsa_padding_mode:oaep',
      '-pkeyopt',
      'rsa_oaep_md:sha256',
      '-pkeyopt',
      'rsa_mgf1_md:sha256',
    ];
    if (label !== '') args.push('-pkeyopt', `rsa_oaep_label:${Buffer.from(label).toString('hex')}`);
    const sessionKey = execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'ignore'] });
    const decipher = createDecipheriv('aes-256-gcm', sessionKey, Buffer.alloc(12));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(2 + rsaLength, bytes.length - 16)), decipher.final()]).toString('utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every value of every SealedSecret among `files`, opened independently: `ns/name/key -> plaintext`. */
function openAll(files: ReadonlyMap<string, string>, privateKey: KeyObject): Map<string, string> {
  const values = new Map<string, string>();
  for (const [path, text] of files) {
    if (!path.startsWith('clusters/eu-1/') && !path.startsWith('x/')) continue;
    if (!path.includes('/sealed/sealed-')) continue;
    const doc = parse(text) as {
      metadata: { name: string; namespace: string; annotations?: Record<string, string> };
      spec: { encryptedData: Record<string, string> };
    };
    // Strict scope (no scope annotation): the label is "namespace/name".
    assert.equal(doc.metadata.annotations?.['sealedsecrets.bitnami.com/cluster-wide'], undefined);
    for (const [key, ciphertext] of Object.entries(doc.spec.encryptedData)) {
      values.set(
        `${doc.metadata.namespace}/${doc.metadata.name}/${key}`,
        independentDecrypt(privateKey, `${doc.metadata.namespace}/${doc.metadata.name}`, ciphertext),
      );
    }
  }
  return values;
}

describe('rotateCredentials', () => {
  let files: Map<string, string>;
  before(async () => {
    const platform = new FsRepoReader(platformDir());
    files = new Map();
    for (const path of await platform.list('')) files.set(path, (await platform.read(path)) ?? '');
    const result = await renderCluster(memoryRepoReader(files), {
      cluster: { name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1' },
      pass: 'all',
      certificate: oldCert,
      random: randomBytes,
      generatorVersion: 'test',
      registryAuth: JSON.stringify({ auths: { 'ghcr.io': { username: 'robot', password: 'pull-token' } } }),
    });
    for (const [path, text] of result.tree) files.set(path, text);
  });

  it('re-encrypts every stale SealedSecret for the new key with the same values, and nothing else', async () => {
    const plan = await rotateCredentials(memoryRepoReader(files), {
      cluster: 'eu-1',
      certificate: newCert,
      values: { keep: { privateKeys: [oldKey.privateKey] } },
      generatorVersion: 'test',
    });
    assert.equal(plan.rotated.length, 4);
    assert.ok(plan.rotated.every((c) => c.values === 'same'));
    assert.deepEqual(
      [...plan.files.keys()].filter((p) => !p.includes('/sealed/sealed-')),
      [],
      'only SealedSecrets change',
    );
    assert.deepEqual(plan.passwordChanges, []);
    const before = openAll(files, oldKey.privateKey);
    const after = openAll(plan.files, newKey.privateKey);
    assert.equal(after.size, 6);
    for (const [key, value] of after) assert.equal(value, before.get(key), `${key} keeps its value`);
    for (const text of plan.files.values()) {
      assert.match(text, new RegExp(`sealed-with: sha256:${newCert.fingerprint}`));
      assert.throws(() => openAll(new Map([['x/sealed/sealed-x.yaml', text]]), oldKey.privateKey), 'the old key no longer opens it');
    }
    assert.deepEqual(plan.remaining, []);
  });

  it('refuses, naming the flag, when the given key does not open a value; nothing is half-rotated', async () => {
    const other = createTestCertificate();
    await assert.rejects(
      rotateCredentials(memoryRepoReader(files), {
        cluster: 'eu-1',
        certificate: newCert,
        values: { keep: { privateKeys: [other.privateKey] } },
        generatorVersion: 'test',
      }),
      (e: Error) =>
        e instanceof ValidationError &&
        /recovery-private-key/.test(JSON.stringify((e as ValidationError).issues ?? e.message)) &&
        !/[A-Za-z0-9+/]{40,}/.test(e.message),
    );
  });

  /**
   * A Sealed Secrets controller's /v1/rotate, stubbed: it re-encrypts with the old key for the new one, as
   * the controller does, and `tamper` then changes the encryptedData of its answer.
   */
  const controller =
    (tamper: (data: Record<string, string>) => Record<string, string> = (data) => data): ControllerReencrypt =>
    async (sent) => {
      const answer = structuredClone(sent) as { spec: { encryptedData: Record<string, string> } };
      answer.spec.encryptedData = tamper(reencryptedData(answer, [oldKey.privateKey], newCert));
      return answer;
    };
  const rotateThrough = (reencrypt: ControllerReencrypt) =>
    rotateCredentials(memoryRepoReader(files), {
      cluster: 'eu-1',
      certificate: newCert,
      credentials: ['database/postgresql-credentials'],
      values: { controller: { reencrypt } },
      generatorVersion: 'test',
    });

  it("takes the controller's re-encryption when it holds the same keys, each with a value", async () => {
    const plan = await rotateThrough(controller());
    assert.deepEqual([...plan.files.keys()], ['clusters/eu-1/database/sealed/sealed-postgresql-credentials.yaml']);
    const before = openAll(files, oldKey.privateKey);
    const after = openAll(plan.files, newKey.privateKey);
    assert.ok(after.size >= 2, 'the credential has several keys (one can go missing)');
    for (const [key, value] of after) assert.equal(value, before.get(key), `${key} keeps its value`);
  });

  it('refuses a controller answer missing a key, with a key more, or with an empty value: a Secret without its password breaks every login', async () => {
    const tampered: Record<string, (data: Record<string, string>) => Record<string, string>> = {
      'a key missing': (data) => Object.fromEntries(Object.entries(data).slice(1)),
      'no key at all': () => ({}),
      'a key more': (data) => ({ ...data, extra: Object.values(data)[0]! }),
      'a key renamed': (data) => Object.fromEntries(Object.entries(data).map(([key, value], i) => [i === 0 ? `${key}-renamed` : key, value])),
      'an empty value': (data) => Object.fromEntries(Object.entries(data).map(([key, value], i) => [key, i === 0 ? '' : value])),
      'a value not a string': (data) => Object.fromEntries(Object.entries(data).map(([key, value], i) => [key, i === 0 ? (42 as unknown as string) : value])),
    };
    for (const [how, tamper] of Object.entries(tampered)) {
      await assert.rejects(
        rotateThrough(controller(tamper)),
        (e: unknown) =>
          e instanceof ValidationError &&
          /sealed-postgresql-credentials\.yaml does not hold the same keys: nothing was written/.test(e.message) &&
          e.issues[0]?.field === 'credential',
        how,
      );
    }
  });

  it('--fresh-values seals new values and writes the Job that sets them in PostgreSQL, named by this rotation', async () => {
    const rotate = () =>
      rotateCredentials(memoryRepoReader(files), {
        cluster: 'eu-1',
        certificate: newCert,
        credentials: ['database/postgresql-credentials'],
        values: { fresh: { random: randomBytes } },
        generatorVersion: 'test',
      });
    const plan = await rotate();
    assert.deepEqual(plan.rotated.map((c) => `${c.namespace}/${c.name}`).sort(), ['database/postgresql-credentials', 'tcr/tcr-database'], 'sameAs partner too');
    assert.equal(plan.passwordChanges.length, 1);
    const job = plan.passwordChanges[0]!;
    assert.match(job.job, /^postgresql-credentials-rotation-[0-9a-f]{10}$/);
    const manifest = plan.files.get(job.file)!;
    const objects = parseAllDocuments(manifest).map(
      (d) => d.toJS() as { kind: string; spec?: { template: { spec: { containers: { command: string[] }[] } } } },
    );
    assert.deepEqual(
      objects.map((o) => o.kind),
      ['ServiceAccount', 'Role', 'RoleBinding', 'Job'],
    );
    const script = objects[3]!.spec!.template.spec.containers[0]!.command[2]!;
    assert.match(script, /ALTER ROLE "%s" PASSWORD/);
    assert.match(script, /'tcr'/);
    assert.match(script, /'postgres'/);
    assert.match(script, /psql .*--username='tcr' --dbname='tcr'/);
    // The new values are in no file in plain text.
    const values = openAll(plan.files, newKey.privateKey);
    for (const value of values.values()) for (const text of plan.files.values()) assert.ok(!text.includes(value));
    assert.match(plan.files.get('clusters/eu-1/database/sealed/kustomization.yaml')!, new RegExp(`- ${job.job}\\.yaml`));
    assert.ok(plan.restart.includes('StatefulSet database/postgresql'), plan.restart.join(', '));
    assert.ok(plan.restart.includes('Deployment tcr/tcr-api'), plan.restart.join(', '));
    assert.deepEqual(plan.readOnly, ['tcr/tcr-database']);
    // Another rotation is another Job.
    assert.notEqual((await rotate()).passwordChanges[0]!.job, job.job);
  });

  it('writes a RabbitMQ change_password Job that reads the password on stdin', async () => {
    const plan = await rotateCredentials(memoryRepoReader(files), {
      cluster: 'eu-1',
      certificate: newCert,
      credentials: ['rabbitmq-credentials'],
      values: { fresh: { random: randomBytes } },
      generatorVersion: 'test',
    });
    const manifest = plan.files.get(plan.passwordChanges[0]!.file)!;
    assert.match(manifest, /printf '%s' "\$pw" \| kubectl exec -i -n 'database' 'rabbitmq-0' -c 'rabbitmq' -- rabbitmqctl change_password 'tcr'/);
    assert.ok(plan.restart.includes('StatefulSet database/rabbitmq'));
  });
});
