/**
 * A hostile, authenticated caller points the real service (local executor,
 * PGlite, the default plugins: real git, real previewer, real catalog and fleet readers)
 * at repositories built to make it read the host's files or to fail every run
 * it starts. Each attack must answer 4xx, start nothing, and give back none of
 * the host's bytes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { startService, type RunningService } from '../../src/main.js';
import { platformDir } from '../../src/package-paths.js';
import { createPino } from '../../src/pino-logger.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { runCli } from '../support/cli.js';
import { gitSync as git } from '../support/git.js';

const TOKEN = 'hostile-caller-token-0123456789';
const HOST_SECRET = '-----BEGIN RSA PRIVATE KEY-----\nHOST-SECRET-BYTES-never-to-leave\n-----END RSA PRIVATE KEY-----\n';

/** A bare repository holding the default platform plus whatever `attack` writes into a working copy. */
async function hostileRepository(root: string, name: string, attack: (work: string) => Promise<void>): Promise<string> {
  const bare = join(root, `${name}.git`);
  await ensureSeededBareRepository(bare, platformDir('default'));
  const work = join(root, `${name}-work`);
  git(root, 'clone', '--quiet', bare, work);
  await attack(work);
  git(work, 'add', '-A');
  git(work, 'commit', '--quiet', '-m', 'attack');
  git(work, 'push', '--quiet', 'origin', 'HEAD:main');
  return pathToFileURL(bare).href;
}

describe('a hostile caller against the real service', { timeout: 300_000 }, () => {
  let root: string;
  let hostDir: string;
  let service: RunningService;
  const urls: Record<string, string> = {};
  const certificate = createTestCertificate({}).certificatePem;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'hostile-'));
    // Stands for the service's data directory: a sealing key a caller must never see.
    hostDir = join(root, 'host-secrets');
    await mkdir(hostDir);
    await writeFile(join(hostDir, 'tls.key'), HOST_SECRET);
    await writeFile(join(hostDir, 'kustomization.yaml'), 'resources: []\n');

    urls.clusterLink = await hostileRepository(root, 'cluster-link', async (work) => {
      await symlink(hostDir, join(work, 'clusters', 'eu-prod-9'));
    });
    urls.fileLink = await hostileRepository(root, 'file-link', async (work) => {
      await mkdir(join(work, 'clusters', 'eu-prod-9'), { recursive: true });
      await symlink(join(hostDir, 'tls.key'), join(work, 'clusters', 'eu-prod-9', 'provenance.yaml'));
    });
    urls.descriptorLink = await hostileRepository(root, 'descriptor-link', async (work) => {
      await rm(join(work, 'scaffold.yaml'), { force: true });
      await symlink(join(hostDir, 'tls.key'), join(work, 'scaffold.yaml'));
    });
    urls.kustomizeEscape = await hostileRepository(root, 'kustomize-escape', async (work) => {
      await writeFile(join(work, 'base', 'apps', 'kustomization.yaml'), `resources:\n  - ../../../../../../../../..${hostDir}\n`);
    });
    urls.aliasBomb = await hostileRepository(root, 'alias-bomb', async (work) => {
      const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
      for (let i = 0; i < 40; i++)
        lines.push(`b${i}: &b${i} [*${i === 0 ? 'a' : `b${i - 1}`},*${i === 0 ? 'a' : `b${i - 1}`},*${i === 0 ? 'a' : `b${i - 1}`}]`);
      await writeFile(join(work, 'scaffold.yaml'), `${lines.join('\n')}\n`);
    });
    urls.plain = await hostileRepository(root, 'plain', async (work) => {
      await writeFile(join(work, 'README.md'), 'nothing hostile\n');
    });

    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: TOKEN,
      DATA_DIR: join(root, 'data'),
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'silent',
      ALLOWED_REPOSITORY_URLS: Object.values(urls).join(','),
    });
    service = await startService(config, { logger: createPino({ level: 'silent', pretty: false }) });
  });

  after(async () => {
    await service?.close();
    await rm(root, { recursive: true, force: true });
  });

  const post = (body: unknown, query = '') =>
    service.app.inject({ method: 'POST', url: `/api/v1/scaffolds${query}`, headers: { authorization: `Bearer ${TOKEN}` }, payload: body as object });
  const request = (url: string, cluster: Record<string, string> = {}) => ({
    cluster: { name: 'eu-prod-9', domain: 'eu-prod-9.example.net', region: 'eu-west-1', ...cluster },
    repository: { url },
    sealing: { certificate },
  });
  const runCount = async (): Promise<number> => {
    const list = await service.app.inject({ method: 'GET', url: '/api/v1/scaffolds?limit=100', headers: { authorization: `Bearer ${TOKEN}` } });
    return (list.json() as { items: unknown[] }).items.length;
  };

  const auth = { authorization: `Bearer ${TOKEN}` };
  async function finalRun(id: string): Promise<{ status: string; step: number; message: string }> {
    for (let i = 0; i < 600; i++) {
      const run = (await service.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: auth })).json() as {
        status: string;
        step: number;
        message: string;
      };
      if (!['pending', 'running'].includes(run.status)) return run;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`run ${id} did not finish`);
  }

  for (const [attack, key] of [
    ['clusters/<name> is a symbolic link to a host directory', 'clusterLink'],
    ['a file of the cluster path is a symbolic link to a host file', 'fileLink'],
    ['a kustomization names a host directory through ".."', 'kustomizeEscape'],
  ] as const) {
    it(`refuses a dry run, and fails a run at its clone, where ${attack}, returning none of the host's bytes`, async () => {
      // The attacks sit at clusters/eu-prod-9; each run ends before the next test starts.
      const name = 'eu-prod-9';
      const before = await runCount();
      const dryRun = await post(request(urls[key] as string, { name, domain: `${name}.example.net` }), '?dry_run=true');
      assert.equal(dryRun.statusCode, 400, dryRun.body.slice(0, 300));
      assert.ok(!dryRun.body.includes('HOST-SECRET-BYTES'), dryRun.body);
      assert.ok(!dryRun.body.includes(hostDir), 'the message does not tell where the link points');
      assert.equal(dryRun.json().error.fields[0].field, 'repository');
      assert.equal(await runCount(), before, 'a dry run stores no run');

      // The repository's content is read by the run itself (it may change after the request): step 1 refuses it.
      const accepted = await post(request(urls[key] as string, { name, domain: `${name}.example.net` }));
      assert.equal(accepted.statusCode, 202, accepted.body);
      const run = await finalRun(accepted.json().id as string);
      assert.equal(run.status, 'failed');
      assert.equal(run.step, 1, run.message);
      assert.match(run.message, /symbolic link|outside the repository/);
      const logs = await service.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${accepted.json().id as string}/logs`, headers: auth });
      assert.ok(!logs.body.includes('HOST-SECRET-BYTES'));
      assert.equal(
        git(
          root,
          '--git-dir',
          join(root, `${key === 'clusterLink' ? 'cluster-link' : key === 'fileLink' ? 'file-link' : 'kustomize-escape'}.git`),
          'log',
          '--format=%s',
          '-1',
          'main',
        ).trim(),
        'attack',
        'nothing was pushed',
      );
    });
  }

  for (const key of ['clusterLink', 'fileLink'] as const) {
    it(`refuses to list or remove the fleet of a repository whose cluster path leads to host files (${key})`, async () => {
      const repository = encodeURIComponent(urls[key] as string);
      const fleet = await service.app.inject({ method: 'GET', url: `/api/v1/clusters?repository_url=${repository}`, headers: auth });
      assert.ok(fleet.statusCode >= 400 && fleet.statusCode < 500, fleet.body.slice(0, 300));
      assert.ok(!fleet.body.includes('HOST-SECRET-BYTES'), fleet.body);
      const removal = await service.app.inject({
        method: 'DELETE',
        url: `/api/v1/clusters/eu-prod-9?confirm=eu-prod-9&repository_url=${repository}`,
        headers: auth,
      });
      assert.ok(removal.statusCode >= 400 && removal.statusCode < 500, removal.body.slice(0, 300));
      assert.ok(!removal.body.includes('HOST-SECRET-BYTES'), removal.body);
      assert.equal(
        git(root, '--git-dir', join(root, `${key === 'clusterLink' ? 'cluster-link' : 'file-link'}.git`), 'log', '--format=%s', '-1', 'main').trim(),
        'attack',
        'nothing was pushed',
      );
    });
  }

  it('refuses a repository whose scaffold.yaml is a link to a host file, in the catalog and in a run', async () => {
    const catalog = await service.app.inject({
      method: 'GET',
      url: `/api/v1/catalog?repository_url=${encodeURIComponent(urls.descriptorLink as string)}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.ok(catalog.statusCode >= 400 && catalog.statusCode < 500, catalog.body);
    assert.ok(!catalog.body.includes('HOST-SECRET-BYTES'), catalog.body);
    const run = await post(request(urls.descriptorLink as string, { name: 'eu-prod-22', domain: 'eu-prod-22.example.net' }), '?dry_run=true');
    assert.equal(run.statusCode, 400, run.body);
    assert.ok(!run.body.includes('HOST-SECRET-BYTES'), run.body);
  });

  it('answers an alias bomb in scaffold.yaml with a 4xx, not a 500 or a stack trace', async () => {
    const catalog = await service.app.inject({
      method: 'GET',
      url: `/api/v1/catalog?repository_url=${encodeURIComponent(urls.aliasBomb as string)}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(catalog.statusCode, 409, catalog.body);
    assert.match(catalog.json().error.message, /alias/);
    const run = await post(request(urls.aliasBomb as string, { name: 'eu-prod-20', domain: 'eu-prod-20.example.net' }));
    assert.equal(run.statusCode, 409, run.body);
    assert.doesNotMatch(run.body, /at .*\.ts:\d+/);
  });

  it('refuses role and providers the target platform has no catalog for, before a run starts', async () => {
    const before = await runCount();
    const response = await post(request(urls.plain as string, { name: 'eu-prod-21', domain: 'eu-prod-21.example.net', role: 'env' }));
    assert.equal(response.statusCode, 400, response.body);
    assert.deepEqual(
      response.json().error.fields.map((f: { field: string }) => f.field),
      ['cluster.role'],
    );
    assert.match(response.json().error.fields[0].message, /no layer catalog/);
    assert.equal(await runCount(), before);
  });

  it('still dry-runs a repository without an attack', async () => {
    const response = await post(request(urls.plain as string), '?dry_run=true');
    assert.equal(response.statusCode, 200, response.body.slice(0, 500));
    assert.ok((response.json() as { files: unknown[] }).files.length > 10);
  });
});

/**
 * The link chain: `u -> .` beside the link, then `u` k times and `..` k times
 * before the host path. As text it stays inside the tree (each `..` undoes a
 * `u`); the kernel expands each `u` to the same directory, then climbs k levels
 * out and walks down to `hostPath`. k = 20 reaches `/` from any clone the
 * service makes and stays under the kernel's 40 links.
 */
async function linkChain(work: string, link: string, hostPath: string): Promise<void> {
  const dir = join(work, link, '..');
  await mkdir(dir, { recursive: true });
  await symlink('.', join(dir, 'u')).catch(() => undefined);
  await rm(join(work, link), { force: true });
  await symlink(`${'u/'.repeat(20)}${'../'.repeat(20)}${hostPath.replace(/^\/+/, '')}`, join(work, link));
}

describe('a chain of links and FIFOs of the host, through every reader', { timeout: 600_000 }, () => {
  const SENTINEL = `HOST-SENTINEL-${process.pid}-chain`;
  let root: string;
  let hostDir: string;
  let service: RunningService;
  const fifos: string[] = [];
  const urls: Record<string, string> = {};
  const branches = ['f1', 'f2', 'f3', 'f4', 'f5'];
  const certificate = createTestCertificate({}).certificatePem;
  const auth = { authorization: `Bearer ${TOKEN}` };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'hostile-chain-'));
    hostDir = join(root, 'host-secrets');
    await mkdir(join(hostDir, 'build'), { recursive: true });
    // A descriptor of the host's with a catalog to hand back, a host directory kustomize would build, a FIFO.
    await writeFile(join(hostDir, 'scaffold.yaml'), `attributes:\n  role:\n    values: [${SENTINEL}]\n`);
    await writeFile(join(hostDir, 'tls.key'), `${SENTINEL}\n`);
    await writeFile(join(hostDir, 'build', 'kustomization.yaml'), 'resources: [configmap.yaml]\n');
    await writeFile(
      join(hostDir, 'build', 'configmap.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: host\n  namespace: tcr\ndata:\n  secret: ${SENTINEL}\n`,
    );
    execFileSync('mkfifo', [join(hostDir, 'pipe')]);
    fifos.push(join(hostDir, 'pipe'));

    urls.descriptorChain = await hostileRepository(root, 'descriptor-chain', (work) => linkChain(work, 'scaffold.yaml', join(hostDir, 'scaffold.yaml')));
    urls.descriptorFifo = await hostileRepository(root, 'descriptor-fifo', (work) => linkChain(work, 'scaffold.yaml', join(hostDir, 'pipe')));
    for (const branch of branches) git(join(root, 'descriptor-fifo-work'), 'push', '--quiet', 'origin', `HEAD:${branch}`);
    urls.kustomizeChain = await hostileRepository(root, 'kustomize-chain', async (work) => {
      await linkChain(work, 'base/apps/host', join(hostDir, 'build'));
      await writeFile(
        join(work, 'base', 'apps', 'kustomization.yaml'),
        `${(await import('node:fs')).readFileSync(join(work, 'base', 'apps', 'kustomization.yaml'), 'utf8')}  - host\n`,
      );
    });
    urls.fileChain = await hostileRepository(root, 'file-chain', (work) => linkChain(work, 'clusters/eu-prod-9/provenance.yaml', join(hostDir, 'tls.key')));
    urls.missingChain = await hostileRepository(root, 'missing-chain', (work) =>
      linkChain(work, 'clusters/eu-prod-9/provenance.yaml', join(hostDir, 'no-such-file')),
    );
    urls.kustomizationFifo = await hostileRepository(root, 'kustomization-fifo', (work) =>
      linkChain(work, 'clusters/eu-prod-9/kustomization.yaml', join(hostDir, 'pipe')),
    );
    urls.plain = await hostileRepository(root, 'plain', async (work) => {
      await writeFile(join(work, 'README.md'), 'nothing hostile\n');
    });

    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: TOKEN,
      DATA_DIR: join(root, 'data'),
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'silent',
      ALLOWED_REPOSITORY_URLS: Object.values(urls).join(','),
    });
    service = await startService(config, { logger: createPino({ level: 'silent', pretty: false }) });
  });

  after(async () => {
    // Whatever blocked on a FIFO (a reader without the protection) gets its end of file, so nothing is left hanging.
    for (const fifo of fifos) {
      try {
        await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
      } catch {
        // Nobody is reading it.
      }
    }
    await service?.close();
    await rm(root, { recursive: true, force: true });
  });

  /** `request` answered within `ms`, or a failure saying it hung. */
  async function within<T>(ms: number, what: string, request: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([request, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} hung for ${ms} ms`)), ms)))]);
    } finally {
      clearTimeout(timer);
    }
  }
  const catalog = (url: string, branch = 'main') =>
    service.app.inject({ method: 'GET', url: `/api/v1/catalog?repository_url=${encodeURIComponent(url)}&branch=${branch}`, headers: auth });
  const post = (url: string, query = '') =>
    service.app.inject({
      method: 'POST',
      url: `/api/v1/scaffolds${query}`,
      headers: auth,
      payload: { cluster: { name: 'eu-prod-9', domain: 'eu-prod-9.example.net', region: 'eu-west-1' }, repository: { url }, sealing: { certificate } },
    });
  const refusedByPath = (body: string, path: string) => {
    assert.ok(!body.includes(SENTINEL), body);
    assert.ok(!body.includes(hostDir), 'the answer does not tell where the link points');
    const error = (JSON.parse(body) as { error: { fields?: { field: string; message: string }[] } }).error;
    assert.equal(error.fields?.[0]?.field, 'repository', body);
    assert.match(error.fields?.[0]?.message ?? '', new RegExp(`${path.replace(/[.]/g, '\\.')} is a symbolic link`));
  };

  it('GET /api/v1/catalog refuses a scaffold.yaml that reaches a host descriptor through a chain of links, handing back none of it', async () => {
    const answer = await within(60_000, 'the catalog', catalog(urls.descriptorChain as string));
    assert.equal(answer.statusCode, 400, answer.body);
    refusedByPath(answer.body, 'scaffold.yaml');
  });

  it('refuses five catalog requests whose scaffold.yaml leads to a host FIFO at once, and a dry run still answers in its normal time', async () => {
    const plainStarted = Date.now();
    const baseline = await post(urls.plain as string, '?dry_run=true');
    const normal = Date.now() - plainStarted;
    assert.equal(baseline.statusCode, 200, baseline.body.slice(0, 300));

    const catalogStarted = Date.now();
    assert.equal((await catalog(urls.plain as string)).statusCode, 200);
    const oneCatalog = Date.now() - catalogStarted;

    // Five branches, five reads (the catalog shares a read only within one repository and branch): more than
    // libuv's four file-system threads, each of which a blocking read of a FIFO would hold for good.
    const answers = branches.map((branch) => catalog(urls.descriptorFifo as string, branch));
    const pending = answers.map((answer, i) => within(60_000, `the catalog of ${branches[i] as string}`, answer));
    // Refused at once, they settle; were they to block, they would all be past their clone by then.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(answers), new Promise((resolve) => (timer = setTimeout(resolve, oneCatalog * 5)))]);
    clearTimeout(timer);
    const started = Date.now();
    const dryRun = await within(Math.max(60_000, normal * 4), 'a dry run beside five FIFO requests', post(urls.plain as string, '?dry_run=true'));
    assert.equal(dryRun.statusCode, 200, dryRun.body.slice(0, 300));
    assert.ok(Date.now() - started < Math.max(30_000, normal * 4), `the dry run took ${Date.now() - started} ms beside the FIFO requests, ${normal} ms alone`);
    for (const answer of await Promise.all(pending)) {
      assert.equal(answer.statusCode, 400, answer.body);
      refusedByPath(answer.body, 'scaffold.yaml');
    }
  });

  it('refuses a dry run and fails a run at its clone where kustomize would build a host directory through a chain of links', async () => {
    const dryRun = await within(120_000, 'the dry run', post(urls.kustomizeChain as string, '?dry_run=true'));
    assert.equal(dryRun.statusCode, 400, dryRun.body.slice(0, 300));
    refusedByPath(dryRun.body, 'base/apps/host');

    const accepted = await post(urls.kustomizeChain as string);
    assert.equal(accepted.statusCode, 202, accepted.body);
    const id = accepted.json().id as string;
    let run: { status: string; step: number; message: string } | undefined;
    for (let i = 0; i < 1200 && (run === undefined || ['pending', 'running'].includes(run.status)); i++) {
      if (run !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      run = (await service.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}`, headers: auth })).json();
    }
    assert.equal(run?.status, 'failed', JSON.stringify(run));
    assert.equal(run?.step, 1, run?.message);
    assert.match(run?.message ?? '', /base\/apps\/host is a symbolic link .* leaves the work tree/);
    const logs = await service.app.inject({ method: 'GET', url: `/api/v1/scaffolds/${id}/logs`, headers: auth });
    assert.ok(!logs.body.includes(SENTINEL) && !logs.body.includes(hostDir));
    assert.equal(git(root, '--git-dir', join(root, 'kustomize-chain.git'), 'log', '--format=%s', '-1', 'main').trim(), 'attack', 'nothing was pushed');
  });

  it('answers a dry run the same whether the host file a chain names exists or not (no oracle), and a kustomization linked to a FIFO without hanging', async () => {
    const existing = await within(120_000, 'the dry run', post(urls.fileChain as string, '?dry_run=true'));
    const missing = await within(120_000, 'the dry run', post(urls.missingChain as string, '?dry_run=true'));
    assert.equal(existing.statusCode, 400, existing.body.slice(0, 300));
    refusedByPath(existing.body, 'clusters/eu-prod-9/provenance.yaml');
    assert.equal(missing.statusCode, existing.statusCode);
    assert.equal(missing.body, existing.body);

    const fifo = await within(60_000, 'the dry run', post(urls.kustomizationFifo as string, '?dry_run=true'));
    assert.equal(fifo.statusCode, 400, fifo.body.slice(0, 300));
    refusedByPath(fifo.body, 'clusters/eu-prod-9/kustomization.yaml');
  });

  it('generate-gitops-env verify refuses a work tree with the chain, and one holding a FIFO, by path and without hanging', async () => {
    const chained = join(root, 'kustomize-chain-work');
    const chain = await runCli(['verify', '--repo', chained], { timeoutMs: 120_000 });
    assert.notEqual(chain.code, 0, chain.stdout);
    assert.notEqual(chain.code, null, 'verify ended by itself');
    assert.match(chain.stderr, /base\/apps\/host is a symbolic link \(or lies below one\) that leaves the work tree/);
    assert.ok(!`${chain.stdout}${chain.stderr}`.includes(SENTINEL) && !`${chain.stdout}${chain.stderr}`.includes(hostDir));

    const piped = join(root, 'plain-work');
    execFileSync('mkfifo', [join(piped, 'clusters', 'development', 'extra.yaml')]);
    fifos.push(join(piped, 'clusters', 'development', 'extra.yaml'));
    const fifo = await runCli(['verify', '--repo', piped], { timeoutMs: 60_000 });
    assert.notEqual(fifo.code, null, 'verify ended by itself');
    assert.notEqual(fifo.code, 0);
    assert.match(fifo.stderr, /clusters\/development\/extra\.yaml is not a regular file/);

    const graph = await runCli(['graph', '--repo', chained, '--cluster', 'development'], { timeoutMs: 120_000 });
    assert.notEqual(graph.code, 0);
    assert.match(graph.stderr, /base\/apps\/host is a symbolic link/);
    assert.ok(!`${graph.stdout}${graph.stderr}`.includes(SENTINEL));
  });
});
