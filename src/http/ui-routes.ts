/**
 * The operator dashboard's static assets (`ui/dist`, built by Vite from `ui/`),
 * served under `/ui/`, and a redirect from `/` to it.
 *
 * The assets are public: they hold no data. Every run, log line and graph the
 * dashboard shows comes from the authenticated JSON API, with the bearer token
 * the operator typed into the login page. Client routes (`/ui/runs/<id>`,
 * `/ui/dry-run`) fall back to `index.html`; a missing asset is a plain 404.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { packageRoot } from '../package-paths.js';

/** Where the dashboard lives. */
export const UI_PREFIX = '/ui/';

/** The command that builds the dashboard, named in the 503 a service without it answers (package.json's script). */
export const UI_BUILD_COMMAND = 'npm run build:ui';

/** How long an answer to "is the dashboard built?" is kept: a build while serving shows within this. */
const BUILT_CHECK_MS = 1000;

/**
 * Content-Security-Policy of every dashboard response: only the service's own
 * scripts, styles and API; images also from `blob:` (the Flux graph is an
 * `<img>` of an SVG blob, where no script can run).
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Options of {@link registerUiRoutes}. */
export interface UiRoutesOptions {
  /** The built dashboard (holding index.html). @default `<package>/ui/dist` */
  readonly dir?: string;
  /** How long a "built or not" answer is kept, in ms. @default 1000 */
  readonly builtCheckMs?: number;
}

/**
 * Whether `dir` holds a built dashboard (its index.html), asked on each request
 * and answered from a stat at most every `ttlMs`: a `npm run build:ui` while the
 * service runs is served without a restart, at the cost of one stat a second.
 */
export function builtDashboardCheck(dir: string, ttlMs: number = BUILT_CHECK_MS, now: () => number = Date.now): () => boolean {
  const index = join(dir, 'index.html');
  let checkedAt = Number.NEGATIVE_INFINITY;
  let built = false;
  return () => {
    const time = now();
    if (time - checkedAt < ttlMs) return built;
    checkedAt = time;
    try {
      built = statSync(index).isFile();
    } catch {
      built = false;
    }
    return built;
  };
}

/** The built dashboard of this package. */
export function defaultUiDir(): string {
  return join(packageRoot(), 'ui', 'dist');
}

/** Whether a request URL is the dashboard (public static assets) or its `/` redirect. */
export function isUiPath(url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return path === '/' || path === '/ui' || path.startsWith(UI_PREFIX);
}

/**
 * Registers `/` → `/ui/`, `/ui` → `/ui/` and the dashboard under `/ui/`. While
 * the dashboard is not built, `/ui/*` answers 503 saying how to build it; it is
 * asked again on each request (a cached stat), so a build while the service
 * runs is served without a restart.
 */
export async function registerUiRoutes(app: FastifyInstance, options: UiRoutesOptions = {}): Promise<void> {
  const dir = options.dir ?? defaultUiDir();
  const hide = { schema: { hide: true } };
  app.get('/', hide, async (_request, reply) => reply.redirect(UI_PREFIX, 302));
  app.get('/ui', hide, async (_request, reply) => reply.redirect(UI_PREFIX, 302));

  await app.register(
    async (scope) => {
      scope.addHook('onSend', async (_request, reply, payload) => {
        void reply
          .header('content-security-policy', CSP)
          .header('x-content-type-options', 'nosniff')
          .header('referrer-policy', 'no-referrer')
          .header('x-frame-options', 'DENY');
        return payload;
      });

      const built = builtDashboardCheck(dir, options.builtCheckMs);
      if (!built()) {
        // Where the package is installed is the operator's business, not a visitor's: the log has it.
        app.log.warn({ dir }, `the dashboard is not built: /ui/ answers 503 until \`${UI_BUILD_COMMAND}\` has built it (no restart needed)`);
      }
      scope.addHook('onRequest', async (_request, reply) => {
        if (built()) return;
        return reply
          .status(503)
          .header('retry-after', '60')
          .header('cache-control', 'no-store')
          .type('text/plain; charset=utf-8')
          .send(
            `The dashboard is not built: this installation has no ui/dist/index.html. Build it with \`${UI_BUILD_COMMAND}\` in the package's directory; the running service serves it as soon as the build ends (reload this page).\n`,
          );
      });

      await scope.register(fastifyStatic, {
        root: dir,
        prefix: '/',
        wildcard: true,
        index: ['index.html'],
        redirect: false,
        dotfiles: 'ignore',
        schemaHide: true,
        cacheControl: false,
        setHeaders: (response, path) => {
          // Vite names everything under assets/ by content hash; index.html must be revalidated to pick up a new build.
          response.setHeader('cache-control', /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });

      // A client route (no file extension) gets the app shell; anything else missing is a 404.
      scope.setNotFoundHandler(async (request, reply: FastifyReply) => {
        const path = request.url.split('?', 1)[0] ?? '';
        const last = path.slice(path.lastIndexOf('/') + 1);
        if ((request.method === 'GET' || request.method === 'HEAD') && !last.includes('.')) {
          return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').sendFile('index.html');
        }
        return reply.status(404).type('text/plain; charset=utf-8').send(`no dashboard file ${path}\n`);
      });
    },
    { prefix: '/ui' },
  );
}
