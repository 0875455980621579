/**
 * docs/client.md's TypeScript client, exactly as the page shows it, against a
 * real service (embedded mode: local runs, PGlite, the seeded default
 * repository): start, poll, read the result; a second caller for the same
 * cluster gets 409 and follows the active run; a refused request says why.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type RunningService } from '../../src/main.js';
import { createPino } from '../../src/pino-logger.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { loadServiceConfig } from '../../src/service/service-config.js';

const TOKEN = 'client-example-token-0123456789';

interface ClientModule {
  scaffold(request: Record<string, unknown> & { cluster: { name: string; domain: string; region: string } }, options: { baseUrl: string; tokenFile: string; pollMs?: number }): Promise<{
    id: string;
    status: string;
    message: string;
    gitops_path: string | null;
    commits: readonly { pass: string; sha: string }[];
  }>;
}

describe('docs/client.md: the example client loop', () => {
  let dir: string;
  let service: RunningService;
  let client: ClientModule;
  let tokenFile: string;
  const certificate = createTestCertificate().certificatePem;
  const cluster = (name: string) => ({ name, domain: `${name}.example.net`, region: 'eu-west-1' });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'client-example-'));
    const page = await readFile(new URL('../../docs/client.md', import.meta.url), 'utf8');
    const code = /```ts\n(\/\/ scaffold-client\.ts[\s\S]*?)```/.exec(page)?.[1];
    assert.ok(code, 'docs/client.md shows scaffold-client.ts');
    const file = join(dir, 'scaffold-client.mts');
    await writeFile(file, code);
    client = (await import(pathToFileURL(file).href)) as ClientModule;
    tokenFile = join(dir, 'token');
    await writeFile(tokenFile, `${TOKEN}\n`);
    const config = loadServiceConfig({ PORT: '0', HOST: '127.0.0.1', API_TOKENS: TOKEN, DATA_DIR: join(dir, 'data'), EXECUTOR: 'local', AUTH_MODE: 'static', LOG_LEVEL: 'silent' });
    service = await startService(config, { logger: createPino({ level: 'silent', pretty: false }), notice: () => undefined });
  });

  after(async () => {
    await service?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts a run, polls it and returns the pushed result; a concurrent caller follows the same run', async () => {
    const request = { cluster: cluster('eu-client-1'), sealing: { certificate } };
    const options = { baseUrl: service.address, tokenFile, pollMs: 100 };
    const [first, second] = await Promise.all([client.scaffold(request, options), client.scaffold(request, options)]);
    assert.equal(first.status, 'succeeded', first.message);
    assert.equal(first.gitops_path, 'clusters/eu-client-1');
    assert.deepEqual(first.commits.map((c) => c.pass), ['infrastructure', 'all']);
    assert.equal(second.id, first.id, 'the 409 led to the active run');
  });

  it('a refused request fails with the status and the service\'s reason', async () => {
    await assert.rejects(
      client.scaffold({ cluster: cluster('EU-bad') }, { baseUrl: service.address, tokenFile }),
      /starting the run: HTTP 400: /,
    );
    await writeFile(tokenFile, 'a-wrong-token-0123456789\n');
    await assert.rejects(client.scaffold({ cluster: cluster('eu-client-2') }, { baseUrl: service.address, tokenFile }), /HTTP 401/);
  });
});
