/**
 * Issue 9: a sealing certificate outside its validity window, or with a weak
 * key, is refused at the API with 400 naming `sealing.certificate`, for runs
 * and dry runs, before anything is stored, started or previewed. The service
 * checks at its own clock, so these tests pin it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { PgRunStore } from '../db/pg-run-store.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import type { ExecutionState, RunExecutor } from '../service/run-executor.js';
import type { PreviewInput, ScaffoldPreview, ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import type { RunSecrets, RunRecord } from '../run/run-record.js';
import { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createHttpApp } from './create-http-app.js';

const TOKEN = 'cert-validity-token-0123456789';
const NOW = new Date('2026-06-01T00:00:00Z');

class RecordingExecutor implements RunExecutor {
  readonly starts: RunRecord[] = [];
  async start(run: RunRecord, _secrets: RunSecrets): Promise<{ job: string }> {
    this.starts.push(run);
    return { job: run.job };
  }
  async inspect(): Promise<ExecutionState> {
    return { state: 'running' };
  }
  // eslint-disable-next-line require-yield
  async *logs(): AsyncIterable<string> {
    return;
  }
  async cancel(): Promise<void> {}
}

class RecordingPreviewer implements ScaffoldPreviewer {
  readonly calls: PreviewInput[] = [];
  async preview(input: PreviewInput): Promise<ScaffoldPreview> {
    this.calls.push(input);
    return { gitopsPath: `clusters/${input.cluster.name}`, files: [] };
  }
}

let store: PgRunStore;
let app: FastifyInstance;
const executor = new RecordingExecutor();
const previewer = new RecordingPreviewer();
let clusters = 0;

before(async () => {
  store = await PgRunStore.open();
  const service = new RunService({
    store,
    executor,
    previewer,
    defaultRepository: { ensure: async () => 'file:///srv/gitops.git' },
    reference: 'development',
    clock: () => NOW,
  });
  app = await createHttpApp({ service, authenticator: new StaticTokenAuthenticator([TOKEN]), store });
});

after(async () => {
  await app?.close();
  await store?.close();
});

function post(certificate: string, query = '') {
  clusters++;
  const cluster = { name: `cert-${clusters}`, domain: `cert-${clusters}.example.net`, region: 'eu-west-1' };
  return app.inject({
    method: 'POST',
    url: `/api/v1/scaffolds${query}`,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ cluster, sealing: { certificate } }),
  });
}

async function runCount(): Promise<number> {
  return (await store.list({ limit: 1000 })).runs.length;
}

const CASES: readonly [string, () => string, RegExp][] = [
  [
    'an expired certificate',
    () => createTestCertificate({ notBefore: new Date('2016-01-01T00:00:00Z'), notAfter: new Date('2026-01-01T00:00:00Z') }).certificatePem,
    /^certificate #1 expired on 2026-01-01T00:00:00Z \(valid from 2016-01-01T00:00:00Z to 2026-01-01T00:00:00Z; now is 2026-06-01T00:00:00Z\)/,
  ],
  [
    'a certificate that is not valid yet',
    () => createTestCertificate({ notBefore: new Date('2026-06-02T00:00:00Z') }).certificatePem,
    /^certificate #1 is not valid yet \(valid from 2026-06-02T00:00:00Z to 2036-05-30T00:00:00Z; now is 2026-06-01T00:00:00Z\)$/,
  ],
  [
    'a 1024-bit RSA key',
    () => createTestCertificate({ bits: 1024, notBefore: new Date('2026-01-01T00:00:00Z') }).certificatePem,
    /^certificate #1 has a 1024-bit RSA key; at least 2048 bits are required$/,
  ],
  [
    'a key that is not RSA',
    () => createTestCertificate({ keyType: 'ec', notBefore: new Date('2026-01-01T00:00:00Z') }).certificatePem,
    /^certificate #1 has a key of type ec; .*RSA key$/,
  ],
];

describe('POST /api/v1/scaffolds refuses a sealing certificate the controller would not serve', () => {
  for (const [title, certificate, message] of CASES) {
    for (const query of ['', '?dry_run=true']) {
      it(`answers 400 naming sealing.certificate for ${title}${query ? ' (dry run)' : ''}, and starts nothing`, async () => {
        const rows = await runCount();
        const starts = executor.starts.length;
        const previews = previewer.calls.length;
        const response = await post(certificate(), query);
        assert.equal(response.statusCode, 400, response.body);
        const error = response.json().error as { code: string; message: string; fields: { field: string; message: string }[] };
        assert.equal(error.code, 'invalid_input');
        assert.equal(error.fields.length, 1, JSON.stringify(error));
        assert.equal(error.fields[0]?.field, 'sealing.certificate');
        assert.match(error.fields[0]?.message ?? '', message);
        assert.equal(await runCount(), rows, 'no run is stored');
        assert.equal(executor.starts.length, starts, 'no run is started');
        assert.equal(previewer.calls.length, previews, 'nothing is previewed');
      });
    }
  }

  it('accepts a certificate inside its window at the service clock, for a run and a dry run', async () => {
    const pem = createTestCertificate({ notBefore: new Date('2026-01-01T00:00:00Z'), notAfter: new Date('2026-06-01T00:00:00Z') }).certificatePem;
    const run = await post(pem);
    assert.equal(run.statusCode, 202, run.body);
    const preview = await post(pem, '?dry_run=true');
    assert.equal(preview.statusCode, 200, preview.body);
  });
});
