/**
 * The operator dashboard end to end, as an operator uses it: the real service
 * (startService: PGlite, static API tokens, EXECUTOR=local, so every run is a
 * real scaffold-runner child process pushing into the embedded default
 * repository) on 127.0.0.1, and Debian's headless Chromium driven by
 * playwright-core. Every request the browser makes outside the service is
 * refused and counted: the dashboard must work with no other network.
 *
 * Screenshots go to test-output/screenshots/ (git-ignored); their paths are
 * printed as test diagnostics.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { parse } from 'yaml';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { startService, type RunningService } from '../../src/main.js';
import { platformDir } from '../../src/package-paths.js';
import { createPino } from '../../src/pino-logger.js';
import { scopeLabel } from '../../src/sealing/seal.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { unsealValue } from '../../src/sealing/unseal.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { startForgeDouble, type ForgeDouble } from '../support/forge-double.js';
import { startGitHttpServer, type GitHttpServer } from '../support/git-server.js';
import { startKubeApiDouble, type KubeApiDouble } from '../support/kube-api-double.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const UI_DIR = join(ROOT, 'ui');
const UI_DIST = join(UI_DIR, 'dist');
const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

const API_TOKEN = `e2e-api-${randomBytes(18).toString('hex')}`;
const REPOSITORY_TOKEN = `e2e-repo-${randomBytes(18).toString('hex')}`;
// The token of the forge (GitHub double) and of its git server: git pushes and the API calls both use it.
const FORGE_TOKEN = `e2e-forge-${randomBytes(18).toString('hex')}`;
const certificate = createTestCertificate();

const OK_CLUSTER = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };
// A branch the repository does not have: the clone starts it empty, so step 2 finds no reference environment.
const FAILING_CLUSTER = { name: 'us-fail-1', domain: 'us-fail-1.example.net', region: 'us-east-1' };
// Token credentials for the embedded file:// repository: refused before anything is cloned.
const CREDENTIALS_CLUSTER = { name: 'ap-cred-1', domain: 'ap-cred-1.example.net', region: 'ap-south-1' };
// Started from the form with a kubeconfig: it waits at step 4 for a controller that never comes, until cancelled.
const WAITING_CLUSTER = { name: 'eu-wait-1', domain: 'eu-wait-1.example.net', region: 'eu-west-2' };
const DRY_CLUSTER = { name: 'eu-dry-1', domain: 'eu-dry-1.example.org', region: 'eu-central-1' };
// Delivered through pull requests on the forge double: its page lists them while it waits for a merge.
const PR_CLUSTER = { name: 'eu-pr-1', domain: 'eu-pr-1.example.net', region: 'eu-west-3' };
const LAYERS = ['infrastructure', 'apps', 'database', 'cert-manager-config'];

interface ApiRun {
  id: string;
  status: string;
  step: number;
  message: string;
  gitops_path: string | null;
  repository: { url: string; branch: string };
  commits: { pass: string; sha: string }[];
  steps: { step: number; status: string; duration_ms?: number }[];
}

let dataDir: string;
let service: RunningService;
let kube: KubeApiDouble | undefined;
/** A platform repository behind smart HTTP (acme/platform.git) and the GitHub double in front of it. */
let gitHttp: GitHttpServer;
let forge: ForgeDouble;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const blockedRequests: string[] = [];
/** Every page's HTML at each checkpoint, and every dashboard response body the browser received. */
const seenText: { where: string; text: string }[] = [];
const runs: { ok?: ApiRun; failing?: ApiRun; credentials?: ApiRun } = {};

/** Builds ui/dist when it is missing or older than any file of the dashboard's sources. */
function ensureUiBuilt(): void {
  const index = join(UI_DIST, 'index.html');
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => statSync(join(e.parentPath, e.name)).mtimeMs),
    );
  const sources = Math.max(
    newest(join(UI_DIR, 'src')),
    newest(join(UI_DIR, 'public')),
    statSync(join(UI_DIR, 'index.html')).mtimeMs,
    statSync(join(UI_DIR, 'vite.config.ts')).mtimeMs,
  );
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', 'ui', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, `vite build ui failed:\n${result.stdout}\n${result.stderr}`);
}

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(`${service.address}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${API_TOKEN}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T };
}

async function startRun(body: Record<string, unknown>): Promise<string> {
  const response = await api<{ id: string }>('/api/v1/scaffolds', { method: 'POST', body });
  assert.equal(response.status, 202, JSON.stringify(response.body));
  return response.body.id;
}

async function waitForFinal(id: string, timeoutMs = 60_000): Promise<ApiRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api<ApiRun>(`/api/v1/scaffolds/${id}`);
    if (body.status === 'succeeded' || body.status === 'failed' || body.status === 'cancelled') return body;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function checkpoint(name: string, t: { diagnostic(message: string): void }): Promise<void> {
  seenText.push({ where: `page HTML at ${name}`, text: await page.content() });
  const file = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  t.diagnostic(`screenshot: ${file}`);
}

/** The attribute of every element the locator matches. */
async function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  return Promise.all((await locator.all()).map((element) => element.getAttribute(name)));
}

/** An attribute of the element that has focus. */
function focusedAttribute(name: string): Promise<string | null> {
  return page.locator(':focus').getAttribute(name, { timeout: 2000 });
}

/** Presses Tab until `selector` has focus; fails after `max` presses. */
async function tabTo(selector: string, max = 40): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press('Tab');
    if ((await page.locator(`${selector}:focus`).count()) === 1) return presses;
  }
  throw new Error(`Tab never reached ${selector}`);
}

describe('operator dashboard in headless Chromium', { timeout: 600_000 }, () => {
  before(async () => {
    ensureUiBuilt();
    await mkdir(SCREENSHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'dashboard-e2e-'));
    const forgeRepo = join(dataDir, 'forge', 'acme', 'platform.git');
    await ensureSeededBareRepository(forgeRepo, platformDir());
    gitHttp = await startGitHttpServer({ baseDir: join(dataDir, 'forge'), username: 'x-access-token', password: FORGE_TOKEN });
    forge = await startForgeDouble({ forge: 'github', repoDir: forgeRepo, owner: 'acme', repo: 'platform', token: FORGE_TOKEN });
    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: API_TOKEN,
      DATA_DIR: dataDir,
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'warn',
      // The one other repository the dry-run form is pointed at; a caller may name no other local path.
      // …and the forge's repository, for the pull_request run.
      ALLOWED_REPOSITORY_URLS: `${pathToFileURL(join(dataDir, 'matrix-example.git')).href},${gitHttp.url('acme/')}`,
    });
    service = await startService(config, { logger: createPino({ level: 'warn', pretty: false }) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 });
    context = await browser.newContext({ viewport: { width: 1360, height: 900 }, reducedMotion: 'reduce' });
    const origin = new URL(service.address).origin;
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
      blockedRequests.push(url);
      return route.abort('blockedbyclient');
    });
    page = await context.newPage();
    // Everything the service sends the browser: assets, API answers, the followed logs, the graph.
    page.on('response', (response) => {
      const url = response.url();
      if (!url.startsWith(`${origin}/`)) return;
      void response
        .text()
        .then((text) => seenText.push({ where: `browser response ${url}`, text }))
        .catch(() => undefined);
    });
  });

  after(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await service?.close();
    await kube?.stop();
    await forge?.stop();
    await gitHttp?.stop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the dashboard without a token and the API only with one', async () => {
    const root = await fetch(`${service.address}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/ui/');
    const index = await fetch(`${service.address}/ui/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type') ?? '', /text\/html/);
    assert.match(index.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    // A client route gets the app shell; a missing asset does not.
    assert.equal((await fetch(`${service.address}/ui/runs/abc`)).status, 200);
    assert.equal((await fetch(`${service.address}/ui/assets/nothing-here.js`)).status, 404);
    assert.equal((await fetch(`${service.address}/api/v1/scaffolds`)).status, 401);
  });

  it('signs in with the token, then lists runs live until they are final', async (t) => {
    await page.goto(`${service.address}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // A wrong token is refused on the page.
    await page.getByLabel('API token').fill('not-the-token-0123456789');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The service refused this token.').waitFor();
    await page.getByLabel('API token').fill(API_TOKEN);
    await checkpoint('01-login', t);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
    assert.ok(!page.url().includes(API_TOKEN), 'the token must never be in the URL');

    // Three runs at once, started through the API while the list is open.
    const okId = await startRun({ cluster: OK_CLUSTER, sealing: { certificate: certificate.certificatePem } });
    const failingId = await startRun({
      cluster: FAILING_CLUSTER,
      repository: { branch: 'no-such-branch' },
      sealing: { certificate: certificate.certificatePem },
    });
    const credentialsId = await startRun({
      cluster: CREDENTIALS_CLUSTER,
      repository: { credentials: { username: 'scaffolder', token: REPOSITORY_TOKEN } },
      sealing: { certificate: certificate.certificatePem },
    });

    // The list shows the new run while it is in flight…
    const okRow = page.locator(`tr[data-run-id="${okId}"]`);
    await okRow.waitFor({ timeout: 10_000 });
    assert.match((await okRow.textContent()) ?? '', /eu-prod-1/);
    try {
      await page.locator(`tr[data-run-id="${okId}"][data-status="running"]`).waitFor({ timeout: 8000 });
      await checkpoint('02-runs-in-flight', t);
    } catch {
      t.diagnostic('the run finished before the list showed it running');
    }
    // …and follows it to succeeded without a reload.
    await page.locator(`tr[data-run-id="${okId}"][data-status="succeeded"]`).waitFor({ timeout: 60_000 });
    await page.locator(`tr[data-run-id="${failingId}"][data-status="failed"]`).waitFor({ timeout: 30_000 });
    await page.locator(`tr[data-run-id="${credentialsId}"][data-status="failed"]`).waitFor({ timeout: 30_000 });
    const okText = (await okRow.textContent()) ?? '';
    assert.match(okText, /succeeded/);
    assert.match(okText, /7\/7/);
    assert.equal(await okRow.getAttribute('data-action'), 'scaffold');

    runs.ok = await waitForFinal(okId);
    runs.failing = await waitForFinal(failingId);
    runs.credentials = await waitForFinal(credentialsId);
    assert.equal(runs.ok.status, 'succeeded', runs.ok.message);
    await checkpoint('02-runs-list', t);
  });

  it('opens a run from the list with the keyboard: timeline, commits, gitops_path, log and graph', async (t) => {
    const run = runs.ok;
    assert.ok(run !== undefined);
    await page.locator('main h1').focus();
    await tabTo(`a.run-link[href="/ui/runs/${run.id}"]`);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/ui/runs/${run.id}`);
    await page.locator('h1 [data-status="succeeded"]').waitFor();

    // The seven steps with their outcomes and durations: 4–5 skipped (the certificate came with the request).
    const steps = page.locator('ol.timeline > li');
    assert.equal(await steps.count(), 7);
    const statuses = await attributes(steps, 'data-status');
    assert.deepEqual(statuses, ['succeeded', 'succeeded', 'succeeded', 'skipped', 'skipped', 'succeeded', 'succeeded']);
    for (const index of [0, 1, 2, 5, 6]) assert.match((await steps.nth(index).locator('.step-duration').textContent()) ?? '', /\d+(\.\d)? (ms|s)/);
    assert.match((await steps.nth(3).textContent()) ?? '', /certificate was supplied/);

    assert.equal(await page.getByTestId('review-requests').count(), 0, 'a pushed run has no pull requests card');
    // The commits with their full SHAs, and where Flux is pointed.
    const shas = await page.locator('[data-testid="commit-sha"]').allTextContents();
    assert.deepEqual(
      shas,
      run.commits.map((c) => c.sha),
    );
    assert.equal(shas.length, 2);
    assert.equal((await page.locator('[data-testid="gitops-path"]').textContent())?.trim(), 'clusters/eu-prod-1');

    // The log: every line the runner wrote, searchable.
    await page.locator('.log-panel .stream-ended').waitFor({ timeout: 10_000 });
    const lines = page.locator('.log-line');
    assert.ok((await lines.count()) >= 20, `only ${await lines.count()} log lines`);
    assert.match((await page.locator('.log-box').textContent()) ?? '', /pushed pass all as [0-9a-f]{12}/);
    await page.getByLabel('Search the log').fill('pushed pass');
    await page.waitForFunction("document.querySelectorAll('.log-line').length === 2");
    assert.deepEqual(
      (await page.locator('.log-line mark').allTextContents()).map((m) => m.toLowerCase()),
      ['pushed pass', 'pushed pass'],
    );
    await page.getByLabel('Search the log').fill('');

    // The Flux graph: the picture, and each node with its path and health checks.
    const image = page.getByTestId('flux-graph');
    await image.waitFor({ timeout: 20_000 });
    // Decoded, so the SVG is a valid picture.
    await page.waitForFunction(
      `(() => { const img = document.querySelector('[data-testid="flux-graph"]'); return img !== null && img.complete && img.naturalWidth > 100; })()`,
    );
    assert.match((await image.getAttribute('src')) ?? '', /^blob:/);
    assert.match((await image.getAttribute('alt')) ?? '', /apps depends on database and infrastructure/);
    for (const layer of LAYERS) {
      const row = page.locator(`tr[data-node="${layer}"]`);
      assert.match((await row.textContent()) ?? '', new RegExp(`\\./clusters/eu-prod-1/${layer}`));
    }
    assert.match((await page.locator('tr[data-node="infrastructure"]').textContent()) ?? '', /HelmRelease\//);
    const svg = await api<string>(`/api/v1/scaffolds/${run.id}/graph`);
    assert.equal(svg.status, 200);
    for (const layer of LAYERS) assert.match(svg.body, new RegExp(`id="node-flux-system-${layer}"`));
    seenText.push({ where: 'graph SVG', text: svg.body });

    await checkpoint('03-run-succeeded', t);
    const file = join(SCREENSHOTS, '04-run-graph.png');
    await page.locator('.graph-panel').screenshot({ path: file });
    t.diagnostic(`screenshot: ${file}`);
  });

  it('shows why a run failed', async (t) => {
    const run = runs.failing;
    assert.ok(run !== undefined);
    assert.equal(run.status, 'failed');
    assert.equal(run.step, 2);
    // A reload on a client route: the service answers with the app, the tab keeps its token.
    await page.goto(`${service.address}/ui/runs/${run.id}`);
    const error = page.getByTestId('run-error');
    await error.waitFor();
    const text = (await error.textContent()) ?? '';
    assert.match(text, /failed at step 2/);
    assert.match(text, /reference environment clusters\/development\/ does not exist/);
    assert.ok(text.includes(run.message), `the page shows ${text}, the API says ${run.message}`);
    const step2 = page.locator('ol.timeline > li[data-step="2"]');
    assert.equal(await step2.getAttribute('data-status'), 'failed');
    assert.match((await step2.textContent()) ?? '', /does not exist/);
    // The summary decides what the later steps show: 4–5 skipped (the certificate came with the request), the rest never ran.
    const later = (await attributes(page.locator('ol.timeline > li'), 'data-status')).slice(2);
    assert.deepEqual(later, ['not-run', 'skipped', 'skipped', 'not-run', 'not-run']);
    assert.match((await page.locator('ol.timeline > li[data-step="6"]').textContent()) ?? '', /not run/);
    await page.locator('.log-panel .stream-ended').waitFor({ timeout: 10_000 });
    assert.match((await page.locator('.log-box').textContent()) ?? '', /render-infrastructure failed/);
    await checkpoint('05-run-failed', t);

    // The run that was sent a repository token fails at the clone, and says why without the token.
    const credentials = runs.credentials;
    assert.ok(credentials !== undefined);
    await page.goto(`${service.address}/ui/runs/${credentials.id}`);
    await page.getByTestId('run-error').waitFor();
    assert.match((await page.getByTestId('run-error').textContent()) ?? '', /credentials need an https remote/);
    await page.locator('.log-panel .stream-ended').waitFor({ timeout: 10_000 });
    await checkpoint('06-run-failed-credentials', t);
  });

  it('previews a scaffold with the dry-run form: the file tree and a diff', async (t) => {
    await page.getByRole('navigation').getByRole('link', { name: 'New scaffold' }).click();
    await page.getByRole('heading', { name: 'New scaffold', level: 1 }).waitFor();
    // The default platform has no layer catalog: no role or provider field at all.
    await page.locator('[data-catalog="ready"]').waitFor({ state: 'attached', timeout: 30_000 });
    for (const id of ['cluster-role', 'cluster-infra-provider', 'cluster-dns-provider'])
      assert.equal(await page.locator(`#${id}`).count(), 0, `#${id} shown without a catalog`);
    // Keyboard: from the heading, Tab reaches the fields in order.
    await page.locator('main h1').focus();
    await tabTo('#cluster-name');
    await page.keyboard.type(DRY_CLUSTER.name);
    await page.keyboard.press('Tab');
    assert.equal(await focusedAttribute('id'), 'cluster-domain');
    await page.keyboard.type(DRY_CLUSTER.domain);
    await page.keyboard.press('Tab');
    assert.equal(await focusedAttribute('id'), 'cluster-region');
    await page.keyboard.type(DRY_CLUSTER.region);

    // Without a certificate the form says what is missing and where.
    await page.getByRole('button', { name: 'Preview the files' }).click();
    await page.getByRole('link', { name: /Sealing certificate: Paste/ }).waitFor();
    await page.getByLabel('Sealing certificate, PEM (required)').fill(certificate.certificatePem);
    await page.getByRole('button', { name: 'Preview the files' }).click();

    const tree = page.getByRole('tree', { name: 'Files the scaffold would write' });
    await tree.waitFor({ timeout: 30_000 });
    assert.match((await page.locator('#result-heading').textContent()) ?? '', /files under clusters\/eu-dry-1/);
    const files = await attributes(tree.locator('[role="treeitem"][data-path$=".yaml"]'), 'data-path');
    for (const expected of [
      'clusters/eu-dry-1/kustomization.yaml',
      'clusters/eu-dry-1/flux/cluster-config.yaml',
      'clusters/eu-dry-1/database/sealed/sealed-postgresql-credentials.yaml',
    ]) {
      assert.ok(files.includes(expected), `${expected} not in the tree: ${files.join(', ')}`);
    }
    assert.equal(await tree.locator('[data-change="added"]').count(), files.length, 'a new cluster: every file is added');

    // Keyboard in the tree: to the flux/ directory, into it, down to cluster-config.yaml, Enter shows its diff.
    await tree.locator('[role="treeitem"][tabindex="0"]').focus();
    const target = 'clusters/eu-dry-1/flux/cluster-config.yaml';
    for (let i = 0; i < 60; i++) {
      if ((await focusedAttribute('data-path')) === target) break;
      await page.keyboard.press('ArrowDown');
    }
    assert.equal(await focusedAttribute('data-path'), target);
    await page.keyboard.press('Enter');
    await page.locator('#diff-heading', { hasText: 'flux/cluster-config.yaml' }).waitFor();
    assert.equal(await tree.locator(`[data-path="${target}"]`).getAttribute('aria-selected'), 'true');
    const added = await page.locator('table.diff tr.diff-add td.text').allTextContents();
    assert.ok(
      added.some((line) => line.includes(DRY_CLUSTER.domain)),
      `no added line with the domain in ${added.join('\n')}`,
    );
    assert.ok(added.some((line) => line.includes(DRY_CLUSTER.region)));
    assert.match((await page.locator('.hunk').first().textContent()) ?? '', /^@@ -0,0 \+1,\d+ @@$/);
    await checkpoint('07-dry-run-diff', t);

    // The same cluster as the succeeded run with a new domain: files it already has are modified.
    await page.getByLabel('Cluster name (required)').fill(OK_CLUSTER.name);
    await page.getByLabel('Domain (required)').fill('eu-prod-1.example.com');
    await page.getByRole('button', { name: 'Preview the files' }).click();
    await page.locator('#result-heading', { hasText: 'clusters/eu-prod-1' }).waitFor({ timeout: 30_000 });
    const hosts = tree.locator('[data-path="clusters/eu-prod-1/apps/hosts/tcr-api.yaml"]');
    assert.equal(await hosts.locator('[data-change]').getAttribute('data-change'), 'modified');
    assert.ok((await tree.locator('[data-change="unchanged"]').count()) > 0);
    await hosts.click();
    await page.locator('#diff-heading', { hasText: 'apps/hosts/tcr-api.yaml' }).waitFor();
    const diffText = (await page.locator('.diff-view').textContent()) ?? '';
    assert.match(diffText, /eu-prod-1\.example\.com/);
    // The service sends what the repository holds now: the old host goes, the new one comes.
    await page.locator('table.diff tr.diff-remove').first().waitFor();
    assert.match((await page.locator('table.diff tr.diff-remove').allTextContents()).join('\n'), /eu-prod-1\.example\.net/);
    assert.match((await page.locator('table.diff tr.diff-add').allTextContents()).join('\n'), /eu-prod-1\.example\.com/);
    await checkpoint('08-dry-run-modified', t);

    // The diff view on a modified file: hunks of the changed lines against the repository's content.
    await page.getByRole('button', { name: 'Preview the files' }).click();
    await page.locator('#result-heading', { hasText: 'clusters/eu-prod-1' }).waitFor({ timeout: 30_000 });
    await tree.locator('[data-path="clusters/eu-prod-1/apps/hosts/tcr-api.yaml"]').click();
    await page.locator('table.diff tr.diff-remove').first().waitFor();
    const removed = (await page.locator('table.diff tr.diff-remove td.text').allTextContents()).join('\n');
    const addedLines = (await page.locator('table.diff tr.diff-add td.text').allTextContents()).join('\n');
    assert.match(removed, /value: api\.eu-prod-1\.example\.net/);
    assert.match(addedLines, /value: api\.eu-prod-1\.example\.com/);
    assert.doesNotMatch(removed, /example\.com/);
    // Only the changed host lines, with context: hunks, not the whole file.
    assert.ok((await page.locator('table.diff tr.diff-context').count()) > 0);
    assert.match((await page.locator('.hunk').first().textContent()) ?? '', /^@@ -\d+,\d+ \+\d+,\d+ @@$/);
    assert.match((await page.locator('.diff-stats').textContent()) ?? '', /\+4 −4/);
    await checkpoint('09-dry-run-modified-diff', t);

    // A repository whose platform has a catalog: a labelled select per attribute, its default chosen.
    const matrixRepo = join(dataDir, 'matrix-example.git');
    await ensureSeededBareRepository(matrixRepo, platformDir('matrix-example'));
    await page.getByLabel('Repository URL').fill(pathToFileURL(matrixRepo).href);
    await page.locator('[data-catalog="ready"] select#cluster-role').waitFor({ timeout: 30_000 });
    const expected = {
      'cluster-role': { label: 'Role', values: ['tooling', 'env'], chosen: 'env' },
      'cluster-infra-provider': { label: 'Infrastructure provider', values: ['proxmox', 'openstack', 'aws', 'gcp', 'digitalocean'], chosen: 'proxmox' },
      'cluster-dns-provider': {
        label: 'DNS provider',
        values: ['digitalocean', 'cloudflare', 'route53', 'clouddns', 'rfc2136', 'designate'],
        chosen: 'digitalocean',
      },
    };
    for (const [id, { label, values, chosen }] of Object.entries(expected)) {
      const select = page.getByLabel(label, { exact: true });
      assert.equal(await select.getAttribute('id'), id);
      assert.deepEqual(await select.locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value)), values);
      assert.equal(await select.inputValue(), chosen);
    }
    // Keyboard: the selects are in the tab order and change with the arrow keys.
    await page.getByLabel('Region (required)').focus();
    await page.keyboard.press('Tab');
    assert.equal(await focusedAttribute('id'), 'cluster-role');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.locator('#cluster-role').inputValue(), 'tooling');
    await checkpoint('10-dry-run-catalog', t);
    await page.getByLabel('Repository URL').fill('');
    // Back to the default repository: its (empty) catalog removes the selects again.
    await page.locator('#cluster-role').waitFor({ state: 'detached', timeout: 30_000 });
    await page.locator('[data-catalog="ready"]').waitFor({ state: 'attached', timeout: 30_000 });
    assert.equal(await page.locator('#cluster-infra-provider, #cluster-dns-provider').count(), 0);
  });

  it('copies and downloads the whole log, and links no commit of a repository on no known host', async (t) => {
    const run = runs.ok;
    assert.ok(run !== undefined);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(service.address).origin });
    await page.goto(`${service.address}/ui/runs/${run.id}`);
    await page.locator('.log-panel .stream-ended').waitFor({ timeout: 10_000 });
    const response = await fetch(`${service.address}/api/v1/scaffolds/${run.id}/logs`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
    assert.equal(response.status, 200);
    const stored = { body: await response.text() };
    assert.ok(stored.body.split('\n').length > 20);

    await page.getByRole('button', { name: 'Copy the log' }).click();
    await page.getByTestId('log-save-note').filter({ hasText: 'Log copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), stored.body);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the log' }).click()]);
    assert.equal(download.suggestedFilename(), `scaffold-${run.id}.log`);
    const saved = await download.path();
    assert.equal(await readFile(saved, 'utf8'), stored.body);

    // A file:// repository has no web page to link to: the SHAs stay plain text.
    assert.equal(await page.getByTestId('commit-sha').count(), 2);
    assert.equal(await page.getByTestId('commit-link').count(), 0);

    // "Actual size" shows the picture at its own size, not fitted to the column.
    const image = page.getByTestId('flux-graph');
    await page.waitForFunction(
      `(() => { const img = document.querySelector('[data-testid="flux-graph"]'); return img !== null && img.complete && img.naturalWidth > 100; })()`,
    );
    // On a narrow window the picture is fitted to the column…
    await page.setViewportSize({ width: 560, height: 900 });
    const sizes = () =>
      image.evaluate((img) => ({
        shown: (img as unknown as { clientWidth: number }).clientWidth,
        natural: (img as unknown as { naturalWidth: number }).naturalWidth,
      }));
    const fitted = await sizes();
    assert.ok(fitted.shown < fitted.natural, JSON.stringify(fitted));
    // …and "Actual size" shows it at its own size, scrolling inside its frame.
    await page.getByRole('button', { name: 'Actual size' }).click();
    const actual = await sizes();
    assert.equal(actual.shown, actual.natural, JSON.stringify(actual));
    assert.equal(await page.getByRole('button', { name: 'Actual size' }).getAttribute('aria-pressed'), 'true');
    assert.ok(
      await page
        .locator('.graph-figure')
        .evaluate(
          (figure) =>
            (figure as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth > (figure as unknown as { clientWidth: number }).clientWidth,
        ),
    );
    await page.getByRole('button', { name: 'Actual size' }).click();
    await page.setViewportSize({ width: 1360, height: 900 });
    await checkpoint('11-run-log-saved', t);

    // Every label of the picture inside its box, measured by this browser with the font it draws the SVG in.
    const svg = await api<string>(`/api/v1/scaffolds/${run.id}/graph`);
    const probe = await context.newPage();
    try {
      await probe.setContent(svg.body);
      const overflowing = await probe.evaluate(`(() => {
        const out = [];
        for (const node of document.querySelectorAll('g.node')) {
          const box = node.querySelector('path, polygon').getBBox();
          for (const text of node.querySelectorAll('text')) {
            const b = text.getBBox();
            if (b.x < box.x - 0.5 || b.x + b.width > box.x + box.width + 0.5) out.push(text.textContent + ': ' + JSON.stringify([b.x, b.width, box.x, box.width]));
          }
        }
        return out;
      })()`);
      assert.deepEqual(overflowing, []);
      assert.ok((await probe.locator('g.node text').count()) >= 8);
    } finally {
      await probe.close();
    }
  });

  it('retries a failed run from the page: the secrets are asked for again and the retry is a new run', async (t) => {
    const run = runs.failing;
    assert.ok(run !== undefined);
    await page.goto(`${service.address}/ui/runs/${run.id}`);
    await page.getByTestId('run-error').waitFor();
    await page.getByRole('button', { name: 'Retry the run' }).click();
    const form = page.getByTestId('retry-form');
    await form.waitFor();
    // The run was given a certificate: the retry asks for it, and only for it.
    assert.equal(await form.locator('input[type="radio"]').count(), 0);
    await form.getByRole('button', { name: 'Start the retry' }).click();
    await form.getByText('Paste the cluster’s Sealed Secrets certificate').waitFor();
    await form.getByLabel('Sealing certificate, PEM (required)').fill(certificate.certificatePem);
    await checkpoint('12-retry-form', t);
    await form.getByRole('button', { name: 'Start the retry' }).click();
    await page.waitForURL((url) => /\/ui\/runs\/[a-z0-9-]+$/.test(url.pathname) && !url.pathname.endsWith(run.id), { timeout: 10_000 });
    const retryId = new URL(page.url()).pathname.split('/').at(-1) ?? '';
    await page.locator('.lede', { hasText: 'attempt 2' }).waitFor();
    const retried = await waitForFinal(retryId);
    // Same branch without a reference environment: the retry fails the same way, as its own run.
    assert.equal(retried.status, 'failed');
    assert.equal((await api<{ attempt: number }>(`/api/v1/scaffolds/${retryId}`)).body.attempt, 2);
    assert.equal((await api<ApiRun>(`/api/v1/scaffolds/${run.id}`)).body.status, 'failed', 'the retried run keeps its status');
    await page.getByTestId('run-error').waitFor({ timeout: 10_000 });
  });

  it("starts a run from the form with a kubeconfig and a registry secret, shows a warning's reason, and cancels the waiting run", async (t) => {
    kube = await startKubeApiDouble();
    const kubeconfigFile = await kube.writeKubeconfig(dataDir, { fileName: 'new-cluster.kubeconfig' });
    const kubeconfig = await readFile(kubeconfigFile, 'utf8');
    // The first read of the controller Deployment fails: the runner warns with the reason, then waits for it.
    kube.injectFailure({ method: 'GET', path: /\/apis\/apps\/v1\/namespaces\/kube-system\/deployments/, code: 503 });
    const registryAuth = JSON.stringify({ auths: { 'registry.example.net': { auth: Buffer.from(`puller:${REPOSITORY_TOKEN}`).toString('base64') } } });

    await page.getByRole('navigation').getByRole('link', { name: 'New scaffold' }).click();
    await page.getByRole('heading', { name: 'New scaffold', level: 1 }).waitFor();
    await page.getByLabel('Cluster name (required)').fill(WAITING_CLUSTER.name);
    await page.getByLabel('Domain (required)').fill(WAITING_CLUSTER.domain);
    await page.getByLabel('Region (required)').fill(WAITING_CLUSTER.region);
    // Every way of giving the sealing certificate is offered.
    for (const label of [
      'The certificate (PEM)',
      'A kubeconfig: the runner waits for the controller and fetches it',
      'A kubeconfig Secret in the service’s cluster',
    ]) {
      await page.getByLabel(label).waitFor();
    }
    await page.getByLabel('A kubeconfig Secret in the service’s cluster').check();
    for (const label of ['Secret namespace (required)', 'Secret name (required)', 'Secret key (required)']) await page.getByLabel(label).waitFor();
    await page.getByLabel('A kubeconfig: the runner waits for the controller and fetches it').check();
    await page.getByLabel('Kubeconfig (required)').fill(kubeconfig);
    await page.getByLabel('Registry pull secret (.dockerconfigjson)').fill(registryAuth);
    // Pull requests ask for the forge, and offer a GitHub App for GitHub only; this run is pushed.
    await page.getByLabel('Open a pull/merge request per pass (a protected branch)').check();
    assert.equal(await page.getByTestId('github-app-fields').count(), 0);
    await page.getByLabel('Forge (required)').selectOption('github');
    for (const label of ['GitHub App id', 'Installation id', 'GitHub App private key (PEM)']) await page.getByLabel(label).waitFor();
    await page.getByLabel('Push each pass to the branch').check();
    assert.equal(await page.getByTestId('github-app-fields').count(), 0);
    await checkpoint('13-start-form', t);
    await page.getByRole('button', { name: 'Start without a preview' }).click();
    await page.waitForURL(/\/ui\/runs\/[a-z0-9-]+$/, { timeout: 10_000 });
    const id = new URL(page.url()).pathname.split('/').at(-1) ?? '';

    // It pushes the infrastructure pass, then waits at step 4; step 5 is still to come (no certificate was given).
    await page.locator('ol.timeline > li[data-step="4"][data-status="running"]').waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('ol.timeline > li[data-step="5"]').getAttribute('data-status'), 'pending');
    await page
      .getByTestId('log-error')
      .filter({ hasText: /HTTP 503/ })
      .waitFor({ timeout: 20_000 });
    assert.match(
      (await page
        .locator('.log-line', { has: page.getByTestId('log-error') })
        .first()
        .textContent()) ?? '',
      /reading the controller Deployment failed; retrying/,
    );
    await checkpoint('14-run-waiting', t);

    await page.getByRole('button', { name: 'Cancel the run' }).click();
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.locator('h1 [data-status="cancelled"]').waitFor({ timeout: 10_000 });
    await page.getByTestId('run-error').filter({ hasText: 'The run was cancelled' }).waitFor();
    const statuses = await attributes(page.locator('ol.timeline > li'), 'data-status');
    assert.deepEqual(statuses, ['succeeded', 'succeeded', 'succeeded', 'cancelled', 'not-run', 'not-run', 'not-run']);
    assert.match((await page.locator('ol.timeline > li[data-step="4"]').textContent()) ?? '', /Stopped: the run was cancelled/);
    const cancelled = await api<ApiRun>(`/api/v1/scaffolds/${id}`);
    assert.equal(cancelled.body.status, 'cancelled');
    assert.equal(cancelled.body.commits.length, 1, 'the infrastructure pass stays pushed');
    // A cancelled run can be retried; an active one offered no retry.
    await page.getByRole('button', { name: 'Retry the run' }).waitFor();
    await checkpoint('15-run-cancelled', t);
  });

  it("lists the fleet with each cluster's status, upgrades one after a preview, and removes a cluster only once its name is typed", async (t) => {
    // The platform team changes the reference after the runs: every generated cluster is now behind it.
    assert.ok(runs.ok !== undefined);
    const work = await mkdtemp(join(tmpdir(), 'dashboard-e2e-platform-'));
    try {
      const git = (...args: string[]) =>
        execFileSync('git', ['-C', work, '-c', 'user.name=Platform', '-c', 'user.email=platform@example.net', ...args], { encoding: 'utf8' });
      execFileSync('git', ['clone', '--quiet', fileURLToPath(runs.ok.repository.url), work]);
      const replicas = join(work, 'clusters', 'development', 'infrastructure', 'ingress-nginx-replicas.yaml');
      await writeFile(replicas, (await readFile(replicas, 'utf8')).replace('value: 3', 'value: 4'));
      git('commit', '--quiet', '-am', 'ingress-nginx: four replicas');
      git('push', '--quiet', 'origin', 'HEAD:main');
    } finally {
      await rm(work, { recursive: true, force: true });
    }

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
    await page.getByRole('heading', { name: 'Fleet', level: 1 }).waitFor();
    // The clusters the runs above pushed, and the reference environment they were rendered from.
    const okRow = page.locator(`tr[data-cluster="${OK_CLUSTER.name}"]`);
    await okRow.waitFor({ timeout: 20_000 });
    assert.equal(await okRow.getAttribute('data-status'), 'behind');
    const okText = (await okRow.textContent()) ?? '';
    for (const expected of ['generated', 'behind', OK_CLUSTER.domain, 'succeeded']) assert.ok(okText.includes(expected), `${expected} in ${okText}`);
    const waitRow = page.locator(`tr[data-cluster="${WAITING_CLUSTER.name}"]`);
    assert.equal(await waitRow.getAttribute('data-status'), 'behind');
    const reference = page.locator('tr[data-cluster="development"]');
    assert.equal(await reference.getAttribute('data-status'), 'not_applicable');
    assert.match((await reference.textContent()) ?? '', /reference/);
    await checkpoint('16-fleet', t);

    // Upgrading shows what would change first, then follows the rollout it starts.
    await waitRow.getByRole('link', { name: WAITING_CLUSTER.name, exact: true }).click();
    await page.getByRole('heading', { name: `Cluster ${WAITING_CLUSTER.name}`, level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Upgrade…' }).click();
    await page.locator('#upgrade-question').waitFor({ timeout: 60_000 });
    assert.match((await page.locator('#upgrade-question').textContent()) ?? '', /0 added, [1-9]\d* modified, 0 removed file/);
    assert.match((await page.getByTestId('upgrade-action').textContent()) ?? '', /modified: clusters\/eu-wait-1\/infrastructure\/ingress-nginx-replicas\.yaml/);
    // Pushed unless the operator asks for a pull request.
    assert.equal(
      await page.locator('#upgrade-delivery').textContent(),
      `The upgrade lands as one commit touching only clusters/${WAITING_CLUSTER.name}/, pushed straight to the branch.`,
    );
    await checkpoint('17-upgrade-preview', t);
    await page.getByRole('button', { name: 'Yes, upgrade it' }).click();
    await page.waitForURL(/\/ui\/upgrades\/[a-z0-9-]+$/, { timeout: 10_000 });
    await page.locator('table[data-state="succeeded"]').waitFor({ timeout: 60_000 });
    const rolloutPath = new URL(page.url()).pathname;
    const rolloutRow = page.locator(`tr[data-cluster="${WAITING_CLUSTER.name}"]`);
    assert.match((await rolloutRow.textContent()) ?? '', /commit [0-9a-f]{12}: 0 added, [1-9]\d* modified, 0 removed/);
    await checkpoint('18-upgrade-rollout', t);
    // The cluster's upgrade is a run: its page shows its three steps, its one commit and what it changed.
    await rolloutRow.getByTestId('upgrade-run-link').click();
    await page.waitForURL(/\/ui\/runs\/[a-z0-9-]+$/, { timeout: 10_000 });
    await page.getByRole('heading', { name: `Upgrade of ${WAITING_CLUSTER.name}`, level: 1 }).waitFor();
    await page.locator('h1 [data-status="succeeded"]').waitFor({ timeout: 30_000 });
    assert.deepEqual(await attributes(page.locator('ol.timeline > li'), 'data-status'), ['succeeded', 'succeeded', 'succeeded']);
    assert.equal(await page.locator('[data-testid="commit-sha"]').count(), 1);
    assert.match((await page.getByTestId('run-changes').textContent()) ?? '', /0 added.*[1-9]\d* modified.*0 removed/s);
    // Kept credentials are named only when the runner reported them.
    for (const kept of await page.getByTestId('credentials-kept').allTextContents()) assert.match(kept, /\d+ sealed credentials? kept byte for byte/);
    await checkpoint('18a-upgrade-run', t);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
    await page.locator(`tr[data-cluster="${WAITING_CLUSTER.name}"][data-status="up_to_date"]`).waitFor({ timeout: 30_000 });
    // The upgrade just run heads the list of upgrades under the fleet, linked to its page.
    const newestUpgrade = page.getByTestId('upgrades-list').locator('tbody tr').first();
    await newestUpgrade.waitFor({ timeout: 15_000 });
    assert.equal(await newestUpgrade.getAttribute('data-state'), 'succeeded');
    assert.equal(await newestUpgrade.getByRole('link').getAttribute('href'), rolloutPath);
    assert.match((await newestUpgrade.textContent()) ?? '', /1 succeeded\s*1 in 1 wave/);

    // The cluster page, by keyboard from the list.
    await page.locator('main h1').focus();
    await tabTo(`a.cluster-link[href="/ui/fleet/${OK_CLUSTER.name}"]`);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/ui/fleet/${OK_CLUSTER.name}`);
    await page.getByRole('heading', { name: `Cluster ${OK_CLUSTER.name}`, level: 1 }).waitFor();

    // The controller renewed its key: every SealedSecret the run sealed is named, with the rotation that reseals them.
    const sealingPanel = page.getByTestId('sealing-panel');
    await sealingPanel.getByLabel('Certificate (kubeseal --fetch-cert)').fill(createTestCertificate().certificatePem);
    await sealingPanel.getByRole('button', { name: 'Check' }).click();
    const stale = page.getByTestId('sealing-stale');
    await stale.waitFor({ timeout: 30_000 });
    // postgresql, rabbitmq and tcr-database: the run supplied no registry credential, so no pull secret was sealed.
    assert.equal(await stale.locator('li').count(), 3);
    assert.match(
      (await stale.textContent()) ?? '',
      new RegExp(`database/rabbitmq-credentials in clusters/${OK_CLUSTER.name}/database/sealed/sealed-rabbitmq-credentials\\.yaml`),
    );
    // A pasted certificate names them but cannot rotate them: the cluster's controller re-encrypts them (same values), reached with the kubeconfig.
    assert.equal(await sealingPanel.getByRole('button', { name: /Rotate these/ }).count(), 0);
    assert.match(
      (await page.getByTestId('rotate-needs-kubeconfig').textContent()) ?? '',
      /check with the cluster’s kubeconfig: its controller re-encrypts them/,
    );
    await checkpoint('19a-cluster-sealing', t);

    // The confirmation lists, from the removal's dry run, every file it deletes, before anything is done.
    await page.getByRole('button', { name: 'Remove…' }).click();
    const removalFiles = page.getByTestId('removal-files');
    await removalFiles.waitFor({ timeout: 30_000 });
    assert.match(
      (await removalFiles.locator('p').textContent()) ?? '',
      new RegExp(`^Deletes [1-9]\\d* files the generator wrote under clusters/${OK_CLUSTER.name}/:$`),
    );
    const listed = await removalFiles.locator('li').allTextContents();
    for (const file of [`clusters/${OK_CLUSTER.name}/provenance.yaml`, `clusters/${OK_CLUSTER.name}/database/sealed/sealed-rabbitmq-credentials.yaml`])
      assert.ok(listed.includes(file), `${file} is listed among ${listed.join(', ')}`);
    assert.equal(Number(/Deletes (\d+)/.exec((await removalFiles.locator('p').textContent()) ?? '')?.[1]), listed.length, 'the count is the list');
    // Removal waits for the exact name.
    const confirm = page.getByRole('textbox', { name: 'Cluster name' });
    assert.equal(await focusedAttribute('id'), 'remove-confirm');
    const remove = page.getByRole('button', { name: `Remove ${OK_CLUSTER.name}` });
    await confirm.fill('eu-prod');
    assert.ok(await remove.isDisabled(), 'a partial name does not enable the removal');
    await confirm.fill(OK_CLUSTER.name);
    // Deleting the data too needs the cluster's kubeconfig (the run waits for its Flux between two commits): not without it.
    const deleteData = page.getByRole('checkbox', { name: 'Delete the data too' });
    await deleteData.check();
    const kubeconfigField = page.getByRole('textbox', { name: `Kubeconfig of ${OK_CLUSTER.name} (required to delete the data)` });
    await kubeconfigField.waitFor();
    assert.match(
      (await page.locator('#remove-delete-data-hint').textContent()) ?? '',
      /Needs the cluster’s kubeconfig: the run pushes a commit lifting that mark, waits until the cluster’s Flux has applied it/,
    );
    assert.ok(await remove.isDisabled(), 'no removal of the data without the kubeconfig');
    await deleteData.uncheck();
    assert.equal(await kubeconfigField.count(), 0);
    assert.ok(await remove.isEnabled());
    // Through a pull request: the forge is asked for before anything is sent, then the service's refusal (the embedded
    // repository is a local path, on no forge) shows in the action's error box, and nothing is removed.
    const removeAction = page.getByTestId('remove-action');
    const explained = page.locator('#remove-explained');
    assert.match((await explained.textContent()) ?? '', new RegExp(`under clusters/${OK_CLUSTER.name}/, pushed straight to the branch, followed`));
    await removeAction.getByRole('radio', { name: `Open a pull/merge request on scaffold/${OK_CLUSTER.name}/remove (a protected branch)` }).check();
    assert.match(
      (await explained.textContent()) ?? '',
      new RegExp(`through a pull request on scaffold/${OK_CLUSTER.name}/remove that must be merged, followed`),
    );
    await remove.click();
    await removeAction.getByText('Choose who hosts the repository').waitFor();
    assert.equal(await focusedAttribute('id'), 'remove-delivery-forge');
    assert.equal(await removeAction.getByRole('alert').count(), 0, 'nothing was sent');
    await removeAction.getByRole('combobox', { name: 'Forge (required)' }).selectOption('github');
    await remove.click();
    const refusal = removeAction.getByRole('alert');
    await refusal.waitFor({ timeout: 10_000 });
    assert.equal(
      await refusal.textContent(),
      'Could not remove the cluster: delivery.mode: pull_request needs a repository hosted on a forge, not a local path',
    );
    assert.match(page.url(), new RegExp(`/ui/fleet/${OK_CLUSTER.name}$`), 'a refused removal stays on the cluster page');
    await checkpoint('19-cluster-remove-pull-request-refused', t);
    await removeAction.getByRole('radio', { name: 'Push the commit to the branch' }).check();
    await confirm.focus();
    await checkpoint('19-cluster-remove', t);
    await page.keyboard.press('Enter');
    // The DELETE starts a removal run (202): as after every action, the page goes to that run.
    await page.waitForURL(/\/ui\/runs\/[a-z0-9-]+$/, { timeout: 30_000 });
    await page.getByRole('heading', { name: `Removal of ${OK_CLUSTER.name}`, level: 1 }).waitFor();
    await page.locator('h1 [data-status="succeeded"]').waitFor({ timeout: 60_000 });
    // Five steps: the lift of the data's protection and the wait for it (2 and 3) skipped, the data kept.
    assert.deepEqual(await attributes(page.locator('ol.timeline > li'), 'data-status'), ['succeeded', 'skipped', 'skipped', 'succeeded', 'succeeded']);
    assert.equal(await page.locator('[data-testid="commit-sha"]').count(), 1);
    assert.match((await page.getByTestId('run-changes').textContent()) ?? '', /[1-9]\d* removed/);
    assert.equal(await page.locator('.graph-panel').count(), 0, 'a removal leaves no graph to draw');
    await checkpoint('19b-removal-run', t);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
    await page.getByRole('heading', { name: 'Fleet', level: 1 }).waitFor();
    await page.locator(`tr[data-cluster="${WAITING_CLUSTER.name}"]`).waitFor({ timeout: 20_000 });
    // The fleet is read from the branch at most every 10 s (and the page polls as often): the removal shows within two reads.
    // The path stays for the cluster's Flux to prune (only the rewritten entry point), so it is listed as no longer the generator's.
    await page.locator(`tr[data-cluster="${OK_CLUSTER.name}"][data-state="unmanaged"]`).waitFor({ timeout: 30_000 });
    const fleet = await api<{ clusters: { name: string; kind: string }[] }>('/api/v1/clusters');
    assert.equal(fleet.body.clusters.find((c) => c.name === OK_CLUSTER.name)?.kind, 'unmanaged', JSON.stringify(fleet.body));
    await checkpoint('20-fleet-after-removal', t);

    // The run list names what each run did: the upgrade and the removal sit beside the scaffolds, with their own step counts.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    const removalRow = page.locator('tr[data-action="remove"]', { hasText: OK_CLUSTER.name });
    await removalRow.waitFor({ timeout: 10_000 });
    assert.match((await removalRow.textContent()) ?? '', /removal.*succeeded.*5\/5 Commit and push the removal/s);
    assert.match(
      (await page.locator('tr[data-action="upgrade"]', { hasText: WAITING_CLUSTER.name }).textContent()) ?? '',
      /upgrade.*succeeded.*3\/3 Commit and push the upgrade/s,
    );
    await checkpoint('21-runs-with-fleet-runs', t);
  });

  it("lists a pull_request run's requests on its page with their pass, link and state, following a merge live", async (t) => {
    const id = await startRun({
      cluster: PR_CLUSTER,
      repository: { url: gitHttp.url('acme/platform.git'), credentials: { token: FORGE_TOKEN } },
      sealing: { certificate: certificate.certificatePem },
      delivery: { mode: 'pull_request', forge: 'github', api_url: forge.apiUrl },
    });
    await page.goto(`${service.address}/ui/runs/${id}`);
    if (
      await page
        .getByRole('heading', { name: 'Sign in' })
        .isVisible({ timeout: 2000 })
        .catch(() => false)
    ) {
      // Run on its own (--test-name-pattern): this page has not signed in yet.
      await page.getByLabel('API token').fill(API_TOKEN);
      await page.keyboard.press('Enter');
    }
    const card = page.getByTestId('review-requests');
    const request = (n: number) => card.locator('[data-testid="review-request"]', { has: page.locator(`a[href$="/pull/${n}"]`) });
    // Pass 1's request is open: the run waits for a person to merge it.
    await request(1).locator('[data-review-state="open"]').waitFor({ timeout: 60_000 });
    assert.match((await request(1).textContent()) ?? '', /Pass 1: infrastructure layer.*GitHub #1.*from scaffold\/eu-pr-1\/infrastructure/);
    assert.equal(await request(1).locator('a').getAttribute('href'), `${forge.apiUrl}/acme/platform/pull/1`);
    assert.equal(await request(1).locator('a').getAttribute('target'), '_blank');
    await page.getByTestId('run-message').filter({ hasText: 'waiting for request #1 to be merged' }).waitFor();
    await checkpoint('16-pull-request-open', t);

    // A reviewer merges it: the page shows it merged without a reload, and pass 2 opens its own.
    await forge.merge(1);
    await request(1).locator('[data-review-state="merged"]').waitFor({ timeout: 60_000 });
    await request(2).locator('[data-review-state="open"]').waitFor({ timeout: 60_000 });
    assert.match((await request(2).textContent()) ?? '', /Pass 2: all layers.*GitHub #2/);
    await checkpoint('17-pull-requests-merged-and-open', t);
    const view = await api<{ review_requests: { pass: string; number: number; state: string }[] }>(`/api/v1/scaffolds/${id}`);
    assert.deepEqual(
      view.body.review_requests.map((r) => `${r.pass}#${r.number}:${r.state}`),
      ['infrastructure#1:merged', 'all#2:open'],
    );

    // Nobody merges pass 2: cancel; the requests stay listed.
    assert.equal((await api(`/api/v1/scaffolds/${id}/cancel`, { method: 'POST' })).status, 200);
    await page.locator('h1 [data-status="cancelled"]').waitFor({ timeout: 20_000 });
    assert.equal(await card.locator('[data-testid="review-request"]').count(), 2);
  });

  it('puts no credential into any page or dashboard asset', async () => {
    const run = runs.ok;
    assert.ok(run !== undefined);
    // A generated password, read back from the pushed tree with the sealing key.
    const repository = fileURLToPath(run.repository.url);
    const sealedFile = execFileSync(
      'git',
      ['--git-dir', repository, 'show', `${run.commits.at(-1)?.sha}:clusters/eu-prod-1/database/sealed/sealed-postgresql-credentials.yaml`],
      { encoding: 'utf8' },
    );
    const sealed = parse(sealedFile) as { metadata: { name: string; namespace: string }; spec: { encryptedData: Record<string, string> } };
    const label = scopeLabel('strict', sealed.metadata.namespace, sealed.metadata.name);
    const password = unsealValue({ privateKey: certificate.privateKey, label, ciphertext: sealed.spec.encryptedData['postgres-password'] as string }).toString(
      'utf8',
    );
    assert.ok(password.length >= 16, 'the generated password was read back');

    // Every dashboard asset, fetched the way any client would (no token).
    const index = await (await fetch(`${service.address}/ui/`)).text();
    seenText.push({ where: '/ui/', text: index });
    const assets = [...index.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), assets.join(', '));
    for (const asset of assets) {
      const response = await fetch(`${service.address}${asset}`);
      assert.equal(response.status, 200, asset);
      seenText.push({ where: asset, text: await response.text() });
    }
    for (const name of readdirSync(join(UI_DIST, 'assets')))
      seenText.push({ where: `ui/dist/assets/${name}`, text: await (await fetch(`${service.address}/ui/assets/${name}`)).text() });

    const privateKeyPem = certificate.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const keyLines = privateKeyPem.split('\n').filter((line) => line.length >= 32 && !line.startsWith('-----'));
    const secrets: [string, string][] = [
      ['the API token', API_TOKEN],
      ['the repository token', REPOSITORY_TOKEN],
      ['the forge token', FORGE_TOKEN],
      ...(kube === undefined ? [] : [['the kubeconfig token', kube.token] as [string, string]]),
      ['the generated postgres password', password],
      ...keyLines.map((line, i): [string, string] => [`line ${i + 1} of the sealing private key`, line]),
    ];
    assert.ok(seenText.length > 10, `only ${seenText.length} texts captured`);
    for (const { where, text } of seenText) {
      for (const [what, secret] of secrets) assert.ok(!text.includes(secret), `${what} appears in ${where}`);
      assert.ok(!text.includes('PRIVATE KEY'), `a private key appears in ${where}`);
    }
    assert.deepEqual(blockedRequests, [], 'the dashboard asked for something beyond the service');
  });
});
