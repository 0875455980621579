/**
 * The fleet-wide upgrade, the runs page's status filter in the address and the
 * pages at a phone's width (390 px), in headless Chromium against the real
 * service (PGlite, static API token, EXECUTOR=local: each upgrade is a real
 * scaffold-runner process pushing into a file:// repository of three generated
 * clusters behind their reference). The browser may reach nothing but the service.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { startService, type RunningService } from '../../src/main.js';
import { createPino } from '../../src/pino-logger.js';
import { loadServiceConfig } from '../../src/service/service-config.js';
import { ensureUiBuilt, launchDashboardBrowser, type DashboardBrowser } from '../support/dashboard-browser.js';
import { createGeneratedFleet } from '../support/generated-fleet.js';
import { git } from '../support/git.js';

const API_TOKEN = `e2e-api-${randomBytes(18).toString('hex')}`;
const CLUSTERS = ['eu-fleet-1', 'eu-fleet-2', 'eu-fleet-3'];
/** The two the operator upgrades (eu-fleet-3 stays behind). */
const CHOSEN = CLUSTERS.slice(0, 2);
const PHONE = { width: 390, height: 844 };

let tmp: string;
let bare: string;
let service: RunningService;
let browser: DashboardBrowser;
let rolloutPath: string | undefined;

async function signedInPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${service.address}/`);
  await page.getByLabel('API token').fill(API_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
  return page;
}

/**
 * The page's scroll width, and the elements that stick out of the window with no scrolling box around them
 * (what widens the page). A string: tsx would wrap a function's inner helpers in its own `__name`, unknown in the page.
 */
async function pageOverflow(page: Page, width: number): Promise<{ scrollWidth: number; culprits: string[] }> {
  return page.evaluate(`(() => {
    const culprits = [];
    for (const element of document.querySelectorAll('body *')) {
      const right = element.getBoundingClientRect().right;
      if (right <= ${width} + 0.5) continue;
      // An absolutely positioned element (an sr-only label) escapes a scrolling box that is not its containing block.
      // (Named for the message only: one inside a positioned scrolling box is clipped after all.)
      let clipped = false;
      if (getComputedStyle(element).position !== 'absolute') for (let up = element.parentElement; up !== null && up !== document.body; up = up.parentElement) {
        if (getComputedStyle(up).overflowX !== 'visible') { clipped = true; break; }
      }
      if (!clipped) culprits.push(element.tagName + '.' + String(element.className) + ' right=' + Math.round(right));
    }
    return { scrollWidth: document.scrollingElement.scrollWidth, culprits: culprits.slice(0, 8) };
  })()`);
}

async function assertFits(page: Page, what: string): Promise<void> {
  const { scrollWidth, culprits } = await pageOverflow(page, PHONE.width);
  assert.ok(scrollWidth <= PHONE.width, `${what}: the page is ${scrollWidth} px wide at ${PHONE.width} px: ${culprits.join(', ')}`);
}

describe('fleet-wide upgrade, the status filter and the phone layout in headless Chromium', { timeout: 240_000 }, () => {
  before(async () => {
    ensureUiBuilt();
    tmp = await mkdtemp(join(tmpdir(), 'fleet-upgrade-e2e-'));
    bare = join(tmp, 'gitops.git');
    await createGeneratedFleet(join(tmp, 'work'), bare, { clusters: CLUSTERS });
    const config = loadServiceConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKENS: API_TOKEN,
      DATA_DIR: join(tmp, 'data'),
      EXECUTOR: 'local',
      AUTH_MODE: 'static',
      LOG_LEVEL: 'warn',
      DEFAULT_GITOPS_REPO_URL: pathToFileURL(bare).href,
    });
    service = await startService(config, { logger: createPino({ level: 'warn', pretty: false }) });
    browser = await launchDashboardBrowser(new URL(service.address).origin);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await service?.close();
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true, maxRetries: 10 });
  });

  it('upgrades the selected behind clusters in waves after a per-cluster diff and a confirmation, then follows the rollout', async () => {
    const before = await git(bare, 'rev-parse', 'main');
    const context = await browser.newContext({ width: 1360, height: 900 });
    try {
      const page = await signedInPage(context);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
      const panel = page.getByTestId('fleet-upgrade');
      await panel.waitFor({ timeout: 30_000 });
      for (const name of CLUSTERS) assert.equal(await page.locator(`tr[data-cluster="${name}"]`).getAttribute('data-status'), 'behind');
      // The reference environment is never offered.
      assert.equal(await page.locator('tr[data-cluster="development"] input[type="checkbox"]').count(), 0);

      // One picked by hand, then all of them, then one left out; waves of one cluster.
      await page.getByRole('checkbox', { name: `Upgrade ${CLUSTERS[1]}` }).check();
      assert.match((await panel.textContent()) ?? '', /3 clusters behind the reference; 1 selected/);
      await panel.getByRole('button', { name: 'Select all behind' }).click();
      for (const name of CLUSTERS) assert.equal(await page.getByRole('checkbox', { name: `Upgrade ${name}` }).isChecked(), true);
      await page.getByRole('checkbox', { name: `Upgrade ${CLUSTERS[2]}` }).uncheck();
      assert.match((await panel.textContent()) ?? '', /2 selected/);
      await page.getByLabel('Wave size').fill('1');
      await panel.getByRole('button', { name: 'Preview the upgrade of 2 clusters' }).click();

      // Each cluster's diff in the dry run's diff viewer: the reference's replicas went from 3 to 4.
      const preview = page.getByTestId('fleet-upgrade-preview');
      await preview.waitFor({ timeout: 90_000 });
      assert.match((await preview.getByRole('status').textContent()) ?? '', /2 clusters would change, 0 already up to date, 0 would fail/);
      const diff = page.getByTestId('upgrade-diff');
      assert.equal(await diff.getAttribute('data-cluster'), CLUSTERS[0]);
      for (const name of [...CHOSEN].reverse()) {
        await preview.locator(`.cluster-choice button[data-cluster="${name}"]`).click();
        await page.locator(`[data-testid="upgrade-diff"][data-cluster="${name}"]`).waitFor();
        await diff.getByRole('treeitem', { name: /tcr-api-replicas\.yaml/ }).click();
        assert.match((await diff.locator('.diff-view h3').textContent()) ?? '', new RegExp(`clusters/${name}/apps/tcr-api-replicas\\.yaml`));
        assert.deepEqual(
          (await diff.locator('tr.diff-remove td.text, tr.diff-add td.text').allTextContents()).map((t) => t.trim()),
          ['value: 3', 'value: 4'],
        );
      }

      // Nothing happens before the confirmation, which names the waves.
      assert.equal(await git(bare, 'rev-parse', 'main'), before);
      await page.getByRole('button', { name: 'Upgrade 2 clusters…' }).click();
      assert.equal(await page.locator('#fleet-upgrade-question').textContent(), 'Upgrade 2 clusters in 2 waves of at most 1?');
      assert.deepEqual(await page.getByTestId('fleet-upgrade-waves').locator('li').allTextContents(), [`Wave 1: ${CLUSTERS[0]}`, `Wave 2: ${CLUSTERS[1]}`]);
      await page.getByRole('button', { name: 'Yes, start the rollout' }).click();

      // The rollout page: who started it and when, each cluster's wave, state, times and run.
      await page.waitForURL(/\/ui\/upgrades\/[a-z0-9-]+$/, { timeout: 15_000 });
      rolloutPath = new URL(page.url()).pathname;
      await page.locator('table[data-state="succeeded"]').waitFor({ timeout: 150_000 });
      assert.match((await page.getByTestId('rollout-author').textContent()) ?? '', /^static:/);
      assert.match((await page.getByTestId('rollout-summary').textContent()) ?? '', /ended .* after .*2 clusters in 2 waves of at most 1/s);
      const rows = page.locator('tbody tr');
      assert.deepEqual(
        await rows.evaluateAll((trs) =>
          trs.map((tr) => [tr.getAttribute('data-cluster'), tr.getAttribute('data-status'), tr.querySelectorAll('td')[0]?.textContent]),
        ),
        [
          [CLUSTERS[0], 'succeeded', '1'],
          [CLUSTERS[1], 'succeeded', '2'],
        ],
      );
      for (const name of CHOSEN) {
        const row = page.locator(`tr[data-cluster="${name}"]`);
        assert.match((await row.textContent()) ?? '', /commit [0-9a-f]{12}: 0 added, [1-9]\d* modified, 0 removed/);
        assert.ok(await row.getByTestId('cluster-started').locator('time').getAttribute('datetime'));
        assert.match((await row.getByTestId('cluster-took').textContent()) ?? '', /\d+(\.\d)? (ms|s)|min/);
      }
      // The second wave started after the first one's run: the times are each run's own.
      const started = async (name: string) =>
        Date.parse((await page.locator(`tr[data-cluster="${name}"] [data-testid="cluster-started"] time`).getAttribute('datetime')) ?? '');
      assert.ok((await started(CLUSTERS[1]!)) > (await started(CLUSTERS[0]!)));
      // Each cluster links to its own upgrade run.
      await page.locator(`tr[data-cluster="${CLUSTERS[1]}"]`).getByTestId('upgrade-run-link').click();
      await page.getByRole('heading', { name: `Upgrade of ${CLUSTERS[1]}`, level: 1 }).waitFor({ timeout: 15_000 });

      // The one left out: its own page's upgrade shows the same diff before its confirmation.
      await page.goto(`${service.address}/ui/fleet/${CLUSTERS[2]}`);
      await page.getByRole('button', { name: 'Upgrade…' }).click();
      const single = page.getByTestId('upgrade-action').getByTestId('upgrade-diff');
      await single.waitFor({ timeout: 60_000 });
      await single.getByRole('treeitem', { name: /tcr-api-replicas\.yaml/ }).click();
      assert.deepEqual(
        (await single.locator('tr.diff-remove td.text, tr.diff-add td.text').allTextContents()).map((t) => t.trim()),
        ['value: 3', 'value: 4'],
      );
      await page.getByRole('button', { name: 'Not now' }).click();
      assert.deepEqual(browser.blocked, []);
    } finally {
      await context.close();
    }
    assert.notEqual(await git(bare, 'rev-parse', 'main'), before);
    // Only the chosen clusters were upgraded: the third is still behind.
    const fleet = (await (await fetch(`${service.address}/api/v1/clusters`, { headers: { authorization: `Bearer ${API_TOKEN}` } })).json()) as {
      clusters: { name: string; status: string }[];
    };
    assert.deepEqual(
      CLUSTERS.map((name) => fleet.clusters.find((c) => c.name === name)?.status),
      ['up_to_date', 'up_to_date', 'behind'],
    );
  });

  it("keeps the runs page's status filter in the address: reload and back/forward show the same runs", async () => {
    const context = await browser.newContext({ width: 1360, height: 900 });
    try {
      const page = await signedInPage(context);
      await page.locator('tr[data-status="succeeded"]').first().waitFor({ timeout: 20_000 });
      await page.getByLabel('Status').selectOption('failed');
      assert.equal(new URL(page.url()).search, '?status=failed');
      await page.getByText('No run matches the filter.').waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
      assert.equal(await page.getByLabel('Status').inputValue(), 'failed');
      await page.getByText('No run matches the filter.').waitFor({ timeout: 20_000 });
      await page.getByLabel('Status').selectOption('succeeded');
      assert.equal(new URL(page.url()).search, '?status=succeeded');
      await page.locator('tr[data-status="succeeded"]').first().waitFor();
      await page.goBack();
      assert.equal(new URL(page.url()).search, '?status=failed');
      assert.equal(await page.getByLabel('Status').inputValue(), 'failed');
      await page.getByText('No run matches the filter.').waitFor();
      await page.goBack();
      assert.equal(new URL(page.url()).search, '');
      assert.equal(await page.getByLabel('Status').inputValue(), 'all');
      await page.goForward();
      assert.equal(await page.getByLabel('Status').inputValue(), 'failed');
      // A value the page does not know reads as all runs.
      await page.goto(`${service.address}/ui/?status=bogus`);
      await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
      assert.equal(await page.getByLabel('Status').inputValue(), 'all');
    } finally {
      await context.close();
    }
  });

  it('fits a 390 px screen: no page-wide horizontal scroll on the runs, a run, the fleet, a rollout and the new-scaffold form; log rows stack', async () => {
    const context = await browser.newContext(PHONE);
    try {
      const page = await signedInPage(context);
      const firstRun = page.locator('tr[data-status="succeeded"]').first();
      await firstRun.waitFor({ timeout: 20_000 });
      await assertFits(page, 'runs');
      // The table scrolls inside its own box instead of widening the page.
      const wrap = page.locator('.table-wrap').first();
      assert.ok(
        await wrap.evaluate(
          (el) => (el as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth > (el as unknown as { clientWidth: number }).clientWidth,
        ),
        'the runs table scrolls in its box',
      );

      await firstRun.locator('a.run-link').click();
      await page.locator('h1 [data-status="succeeded"]').waitFor({ timeout: 20_000 });
      const line = page.locator('.log-line').first();
      await line.waitFor({ timeout: 20_000 });
      await assertFits(page, 'run page');
      // The message has its own row under the time, the width of the screen less the margins (not two characters).
      const [time, message] = await Promise.all([line.locator('.log-time, time').first().boundingBox(), line.locator('.log-msg').boundingBox()]);
      assert.ok(time !== null && message !== null);
      assert.ok(message.y >= time.y + time.height - 1, `the message sits under the time: ${JSON.stringify({ time, message })}`);
      assert.ok(message.width >= 280, `the message is ${message.width} px wide`);

      await page.goto(`${service.address}/ui/fleet`);
      await page.locator(`tr[data-cluster="${CLUSTERS[0]}"]`).waitFor({ timeout: 30_000 });
      await assertFits(page, 'fleet');
      if (rolloutPath !== undefined) {
        await page.goto(`${service.address}${rolloutPath}`);
        await page.locator('table[data-state]').waitFor({ timeout: 20_000 });
        await assertFits(page, 'rollout');
      }

      await page.goto(`${service.address}/ui/new`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.locator('form input').first().waitFor();
      await assertFits(page, 'new scaffold form');
      // The header fits on the screen: the brand and the nav are inside it.
      const header = await page.locator('.topbar').boundingBox();
      assert.ok(header !== null && header.width <= PHONE.width, JSON.stringify(header));
    } finally {
      await context.close();
    }
  });
});
