/**
 * What a browser test of the dashboard needs besides the service: ui/dist
 * built from the current sources, and Debian's headless Chromium (through
 * playwright-core) that may reach nothing but the service. Shared by the
 * test/e2e dashboard tests.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const UI_DIR = join(ROOT, 'ui');
const UI_DIST = join(UI_DIR, 'dist');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** Builds ui/dist when it is missing or older than any file of the dashboard's sources. */
export function ensureUiBuilt(): void {
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

/** A browser whose contexts reach only `origin`; every other request is refused and recorded in `blocked`. */
export interface DashboardBrowser {
  readonly browser: Browser;
  readonly blocked: string[];
  newContext(viewport: { width: number; height: number }): Promise<BrowserContext>;
  close(): Promise<void>;
}

export async function launchDashboardBrowser(origin: string): Promise<DashboardBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 });
  const blocked: string[] = [];
  return {
    browser,
    blocked,
    async newContext(viewport) {
      const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
      await context.route('**/*', async (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
        blocked.push(url);
        return route.abort('blockedbyclient');
      });
      return context;
    },
    close: () => browser.close(),
  };
}
