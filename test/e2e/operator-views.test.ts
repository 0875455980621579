/**
 * Operator views of the dashboard, in headless Chromium against the real
 * service (PGlite, static API token, EXECUTOR=local: each run is a real
 * scaffold-runner process pushing into the embedded default repository):
 * what Flux reported while a run waited for Ready, and the pages at a phone's
 * width. The browser may reach nothing but the service.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { startService, type RunningService } from '../../src/main.js';
import { createPino } from '../../src/pino-logger.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { ensureUiBuilt, launchDashboardBrowser, type DashboardBrowser } from '../support/dashboard-browser.js';
import { startKubeApiDouble, type KubeApiDouble } from '../support/kube-api-double.js';

const API_TOKEN = `e2e-api-${randomBytes(18).toString('hex')}`;
const certificate = createTestCertificate();
const READY_CLUSTER = { name: 'eu-flux-1', domain: 'eu-flux-1.example.net', region: 'eu-west-1' };

interface ApiRun {
  id: string;
  status: string;
  message: string;
  commits: { pass: string; sha: string }[];
}

let dataDir: string;
let service: RunningService;
let kube: KubeApiDouble;
let browser: DashboardBrowser;

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(`${service.address}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${API_TOKEN}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T };
}

/** Polls the run until `done` holds (the runner is another process: there is no event to await in here). */
async function runUntil(id: string, done: (run: ApiRun) => boolean, timeoutMs = 90_000): Promise<ApiRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api<ApiRun>(`/api/v1/scaffolds/${id}`);
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${body.status} after ${timeoutMs} ms: ${body.message}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function signedInPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${service.address}/`);
  await page.getByLabel('API token').fill(API_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
  return page;
}

describe('operator views in headless Chromium', { timeout: 360_000 }, () => {
  before(async () => {
    ensureUiBuilt();
    dataDir = await mkdtemp(join(tmpdir(), 'operator-views-e2e-'));
    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: API_TOKEN,
      DATA_DIR: dataDir,
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'warn',
    });
    service = await startService(config, { logger: createPino({ level: 'warn', pretty: false }) });
    kube = await startKubeApiDouble();
    browser = await launchDashboardBrowser(new URL(service.address).origin);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await service?.close();
    await kube?.stop();
    // A graph the run page asked for may still be cloning into dataDir after the service closed: rm retries ENOTEMPTY.
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true, maxRetries: 10 });
  });

  it("shows each Flux Kustomization's Ready status, reason and revision on a run that waited for Ready", async () => {
    const kubeconfig = await readFile(await kube.writeKubeconfig(dataDir, { fileName: 'flux.kubeconfig' }), 'utf8');
    // Before the push: Flux has not applied anything of the run yet.
    kube.setKustomization('flux-system', 'apps', {
      status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Progressing', message: 'reconciliation in progress' }] },
    });
    const created = await api<{ id: string }>('/api/v1/scaffolds', {
      method: 'POST',
      body: {
        cluster: READY_CLUSTER,
        sealing: { certificate: certificate.certificatePem },
        kubeconfig: { inline: kubeconfig },
        wait_for_ready: true,
        ready_timeout_seconds: 120,
      },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const id = created.body.id;

    // Once both passes are pushed, Flux applies the last commit: infrastructure turns Ready, apps fails to build it.
    const pushed = await runUntil(id, (run) => run.commits.length === 2 || run.status === 'failed' || run.status === 'succeeded');
    assert.equal(pushed.commits.length, 2, `both passes pushed: ${pushed.message}`);
    const sha = pushed.commits.at(-1)!.sha;
    const revision = `main@sha1:${sha}`;
    kube.setKustomization('flux-system', 'infrastructure', {
      status: {
        observedGeneration: 1,
        lastAppliedRevision: revision,
        lastAttemptedRevision: revision,
        conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: `Applied revision: ${revision}` }],
      },
    });
    kube.setKustomization('flux-system', 'apps', {
      status: {
        observedGeneration: 1,
        lastAttemptedRevision: revision,
        conditions: [{ type: 'Ready', status: 'False', reason: 'BuildFailed', message: 'kustomize build failed: accumulating resources' }],
      },
    });
    const final = await runUntil(id, (run) => run.status === 'failed' || run.status === 'succeeded' || run.status === 'cancelled');
    assert.equal(final.status, 'failed', final.message);
    assert.match(final.message, /Flux did not report Ready/);

    const context = await browser.newContext({ width: 1360, height: 900 });
    try {
      const page = await signedInPage(context);
      await page.goto(`${service.address}/ui/runs/${id}`);
      const panel = page.getByTestId('flux-readiness');
      await panel.locator('tr[data-kustomization="infrastructure"][data-phase="ready"]').waitFor({ timeout: 20_000 });
      await panel.locator('tr[data-kustomization="apps"][data-phase="failed"]').waitFor({ timeout: 20_000 });
      const rows = await panel
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
      assert.deepEqual(rows, [
        ['flux-system/apps', 'False', 'BuildFailed', 'nothing applied'],
        ['flux-system/infrastructure', 'True', 'ReconciliationSucceeded', revision],
      ]);
      assert.deepEqual(browser.blocked, []);
    } finally {
      await context.close();
    }
  });

  it('shows no Flux readiness on a run that did not wait for it', async () => {
    const created = await api<{ id: string }>('/api/v1/scaffolds', {
      method: 'POST',
      body: { cluster: { name: 'eu-nowait-1', domain: 'eu-nowait-1.example.net', region: 'eu-west-1' }, sealing: { certificate: certificate.certificatePem } },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const final = await runUntil(created.body.id, (run) => run.status === 'failed' || run.status === 'succeeded');
    assert.equal(final.status, 'succeeded', final.message);
    const context = await browser.newContext({ width: 1360, height: 900 });
    try {
      const page = await signedInPage(context);
      await page.goto(`${service.address}/ui/runs/${created.body.id}`);
      await page.locator('h1 [data-status="succeeded"]').waitFor({ timeout: 20_000 });
      // The log is followed to its end before the page could show anything derived from it.
      await page.locator('.log-line').first().waitFor();
      assert.equal(await page.getByTestId('flux-readiness').count(), 0);
      assert.equal(await page.getByTestId('resealed-credentials').count(), 0, 'a scaffold lists no resealed credentials');
    } finally {
      await context.close();
    }
  });

  it('shows a rotation run as a rotation, in the run list and on its page, with the credentials it resealed', async () => {
    const scaffolds = await api<{ items: { id: string; cluster: { name: string } }[] }>('/api/v1/scaffolds?cluster=eu-nowait-1');
    const scaffold = scaffolds.body.items.find((run) => run.cluster.name === 'eu-nowait-1');
    assert.ok(scaffold, 'the previous case scaffolded eu-nowait-1');
    const rotated = await api<{ id: string }>('/api/v1/clusters/eu-nowait-1/rotate', {
      method: 'POST',
      body: { credentials: ['database/rabbitmq-credentials'], fresh_values: true, sealing: { certificate: certificate.certificatePem } },
    });
    assert.equal(rotated.status, 202, JSON.stringify(rotated.body));
    const id = rotated.body.id;
    const final = await runUntil(id, (run) => run.status === 'failed' || run.status === 'succeeded');
    assert.equal(final.status, 'succeeded', final.message);
    const context = await browser.newContext({ width: 1360, height: 900 });
    try {
      const page = await signedInPage(context);
      // The run list: the rotation has its own badge beside the scaffold it rotated.
      const row = page.locator(`tr[data-run-id="${id}"]`);
      await row.waitFor({ timeout: 20_000 });
      assert.equal(await row.getAttribute('data-action'), 'rotate');
      assert.equal((await row.locator('[data-action]').textContent())?.trim(), '⟳ rotation');
      assert.equal(await page.locator(`tr[data-run-id="${scaffold.id}"]`).getAttribute('data-action'), 'scaffold');
      assert.equal((await page.locator(`tr[data-run-id="${scaffold.id}"] [data-action]`).textContent())?.trim(), '+ scaffold');
      // Its page: titled and badged as a rotation, listing the one credential it resealed with a fresh value.
      await row.getByRole('link').first().click();
      await page.waitForURL(`**/ui/runs/${id}`);
      await page.getByRole('heading', { name: /^Rotation of eu-nowait-1/, level: 1 }).waitFor();
      assert.equal(await page.locator('main [data-action="rotate"]').count(), 1);
      const resealed = page.getByTestId('resealed-credentials');
      await resealed.locator('li').first().waitFor({ timeout: 20_000 });
      assert.deepEqual(await resealed.locator('li').evaluateAll((lis) => lis.map((li) => li.textContent?.trim() ?? '')), [
        'database/rabbitmq-credentials: fresh value in clusters/eu-nowait-1/database/sealed/sealed-rabbitmq-credentials.yaml',
      ]);
      assert.deepEqual(browser.blocked, []);
    } finally {
      await context.close();
    }
  });
});
