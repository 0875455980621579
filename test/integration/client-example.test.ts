/**
 * docs/client.md's TypeScript client, exactly as the page shows it, against a
 * real service (embedded mode: local runs, PGlite, the seeded default
 * repository): start, poll, read the result; a second caller for the same
 * cluster gets 409 and follows the active run; a refused request says why.
 * The page's curl/jq loop is run the same way, as a shell script.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type RunningService } from '../../src/main.js';
import { createPino } from '../../src/pino-logger.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { loadServiceConfig } from '../../src/service/service-config.js';

const TOKEN = 'client-example-token-0123456789';

interface ClientModule {
  scaffold(
    request: Record<string, unknown> & { cluster: { name: string; domain: string; region: string } },
    options: { baseUrl: string; tokenFile: string; pollMs?: number },
  ): Promise<{
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
    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: TOKEN,
      DATA_DIR: join(dir, 'data'),
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'silent',
    });
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
    assert.deepEqual(
      first.commits.map((c) => c.pass),
      ['infrastructure', 'all'],
    );
    assert.equal(second.id, first.id, 'the 409 led to the active run');
  });

  it("a refused request fails with the status and the service's reason", async () => {
    await assert.rejects(client.scaffold({ cluster: cluster('EU-bad') }, { baseUrl: service.address, tokenFile }), /starting the run: HTTP 400: /);
    await writeFile(tokenFile, 'a-wrong-token-0123456789\n');
    await assert.rejects(client.scaffold({ cluster: cluster('eu-client-2') }, { baseUrl: service.address, tokenFile }), /HTTP 401/);
  });
});

describe('docs/client.md: the curl and jq loop, run as written', () => {
  let dir: string;
  let service: RunningService;
  let script: string;
  const certificate = createTestCertificate().certificatePem;
  const run = promisify(execFile);

  /** Runs the page's script in a directory of its own with request.json; never hangs past 60 s. */
  async function shellLoop(request: unknown, token = TOKEN): Promise<{ code: number; stdout: string; stderr: string }> {
    const work = await mkdtemp(join(dir, 'loop-'));
    await writeFile(join(work, 'request.json'), JSON.stringify(request));
    await writeFile(join(work, 'token'), `${token}\n`);
    await writeFile(join(work, 'loop.sh'), script);
    const env = { PATH: process.env['PATH'] ?? '', S: service.address, TOKEN_FILE: join(work, 'token'), POLL: '0.2' };
    try {
      const { stdout, stderr } = await run('bash', ['loop.sh'], { cwd: work, env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'client-shell-'));
    const page = await readFile(new URL('../../docs/client.md', import.meta.url), 'utf8');
    const code = /## With curl and jq[\s\S]*?```sh\n([\s\S]*?)```/.exec(page)?.[1];
    assert.ok(code, 'docs/client.md shows the curl loop');
    script = code;
    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: TOKEN,
      DATA_DIR: join(dir, 'data'),
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'silent',
    });
    service = await startService(config, { logger: createPino({ level: 'silent', pretty: false }), notice: () => undefined });
  });

  after(async () => {
    await service?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('two loops for one cluster: the second gets 409, follows the same run, and both end with its result', async () => {
    const request = { cluster: { name: 'eu-shell-1', domain: 'eu-shell-1.example.net', region: 'eu-west-1' }, sealing: { certificate } };
    const [first, second] = await Promise.all([shellLoop(request), shellLoop(request)]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(second.code, 0, second.stderr);
    const a = JSON.parse(first.stdout) as { id: string; status: string; gitops_path: string };
    const b = JSON.parse(second.stdout) as { id: string };
    assert.equal(a.status, 'succeeded');
    assert.equal(a.gitops_path, 'clusters/eu-shell-1');
    assert.equal(b.id, a.id, 'the 409 led to the active run, not to /api/v1/scaffolds/null');
  });

  it('a 400 or 401 stops at once with the status and the reason, exit 1', async () => {
    const bad = await shellLoop({ cluster: { name: 'EU-bad', domain: 'x.example.net', region: 'eu-west-1' } });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /starting the run: HTTP 400: /);
    const unauthorized = await shellLoop(
      { cluster: { name: 'eu-shell-2', domain: 'eu-shell-2.example.net', region: 'eu-west-1' } },
      'a-wrong-token-0123456789',
    );
    assert.equal(unauthorized.code, 1);
    assert.match(unauthorized.stderr, /HTTP 401/);
  });
});
