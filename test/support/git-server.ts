/**
 * Real git servers for tests, on 127.0.0.1 only: `git daemon` (git://, push
 * enabled) and `git http-backend` behind a node:http server that demands HTTP
 * Basic auth, plus bare repositories to serve. Everything stops by itself when
 * the test process ends, even without `stop()`: the daemon is watched through a
 * pipe the test process holds, and the HTTP server does not keep it alive.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { devNull, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runGit } from '../../src/git/git-process.js';
import { freePort, startWatchedServer } from './watched-server.js';

/** The servers run with no system or user git configuration, like the product's own git. */
function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: devNull,
    HOME: devNull,
    LC_ALL: 'C',
    ...extra,
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A running `git daemon`. */
export interface GitDaemon {
  /** `git://127.0.0.1:PORT/<repo>`, `repo` relative to the base directory. */
  url(repo: string): string;
  /** Stops the daemon. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts `git daemon --reuseaddr --export-all --enable=receive-pack` on a free
 * loopback port serving the repositories below `baseDir`, and waits until it
 * accepts connections. `maxConnections` is git daemon's own cap (32 unless
 * given; 0 for none): past it, the daemon kills a connection from the same
 * address, a push in flight included, which a forge serving many runners does not.
 */
export async function startGitDaemon(options: { readonly baseDir: string; readonly maxConnections?: number }): Promise<GitDaemon> {
  let lastError: Error | undefined;
  // A free port can be taken between probing it and the daemon binding it; try again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const started = await startWatchedServer({
      command: 'git daemon "$@"',
      args: [
        '--reuseaddr',
        '--export-all',
        '--enable=receive-pack',
        '--informative-errors',
        `--base-path=${options.baseDir}`,
        '--listen=127.0.0.1',
        `--port=${port}`,
        ...(options.maxConnections !== undefined ? [`--max-connections=${options.maxConnections}`] : []),
      ],
      env: serverEnv(),
      ready: () => canConnect(port),
      timeoutMs: 5000,
      pollMs: 20,
    });
    if ('stop' in started) return { url: (repo) => `git://127.0.0.1:${port}/${repo.replace(/^\/+/, '')}`, stop: started.stop };
    lastError = new Error(`git daemon did not start on port ${port}: ${started.failed}`);
  }
  throw lastError ?? new Error('git daemon did not start');
}

/** One request as the HTTP server received it. */
export interface RecordedRequest {
  readonly authorization?: string;
  /** The request target: path and query string. */
  readonly path: string;
}

/** A running smart-HTTP git server. */
export interface GitHttpServer {
  /** `http://127.0.0.1:PORT/<repo>`. */
  url(repo: string): string;
  /** Every request, in arrival order, authenticated or not. */
  readonly requests: RecordedRequest[];
  /** Closes the server and its connections. Idempotent. */
  stop(): Promise<void>;
}

/** Splits CGI output into header lines and the body that follows; undefined until the blank line arrives. */
function splitCgiHeaders(buffer: Buffer): { headers: string; body: Buffer } | undefined {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return undefined;
  const [end, length] = crlf !== -1 && (lf === -1 || crlf < lf) ? [crlf, 4] : [lf, 2];
  return { headers: buffer.subarray(0, end).toString('latin1'), body: buffer.subarray(end + length) };
}

function runHttpBackend(req: IncomingMessage, res: ServerResponse, baseDir: string, user: string): void {
  const target = new URL(req.url ?? '/', 'http://127.0.0.1');
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const cgi: Record<string, string> = {
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(target.pathname),
    QUERY_STRING: target.search.replace(/^\?/, ''),
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    // Its presence is what lets http-backend accept pushes (receive-pack).
    REMOTE_USER: user,
    GIT_PROJECT_ROOT: baseDir,
    GIT_HTTP_EXPORT_ALL: '1',
  };
  const optional: [string, string | undefined][] = [
    ['CONTENT_TYPE', header('content-type')],
    // Absent for a chunked body: http-backend then reads to EOF.
    ['CONTENT_LENGTH', header('content-length')],
    ['HTTP_GIT_PROTOCOL', header('git-protocol')],
    ['HTTP_CONTENT_ENCODING', header('content-encoding')],
  ];
  for (const [name, value] of optional) if (value !== undefined) cgi[name] = value;

  const child: ChildProcessWithoutNullStreams = spawn('git', ['http-backend'], { env: serverEnv(cgi) });
  req.pipe(child.stdin);
  child.stdin.on('error', () => {});
  child.stderr.resume();
  let pending: Buffer = Buffer.alloc(0);
  let headersSent = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersSent) {
      res.write(chunk);
      return;
    }
    pending = Buffer.concat([pending, chunk]);
    const split = splitCgiHeaders(pending);
    if (!split) return;
    headersSent = true;
    let status = 200;
    for (const line of split.headers.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    if (split.body.length > 0) res.write(split.body);
  });
  // A client that gives up must not leave http-backend running.
  res.on('close', () => {
    if (child.exitCode === null) child.kill();
  });
  child.on('close', () => {
    if (!headersSent) res.writeHead(502).end('http-backend produced no response');
    else res.end();
  });
  child.on('error', () => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
}

/**
 * Starts a node:http server on 127.0.0.1 that serves the repositories below
 * `baseDir` through `git http-backend` (CGI), after checking HTTP Basic
 * credentials; anything else gets 401 with `WWW-Authenticate`.
 */
export async function startGitHttpServer(options: {
  readonly baseDir: string;
  readonly username: string;
  readonly password: string;
  /** A public repository: fetches need no credentials, pushes still do. @default false */
  readonly publicRead?: boolean;
}): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`${options.username}:${options.password}`, 'utf8').toString('base64')}`;
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const authorization = req.headers.authorization;
    requests.push({ ...(authorization !== undefined ? { authorization } : {}), path: req.url ?? '' });
    const fetching = /(\?service=|\/)git-upload-pack$/.test(req.url ?? '');
    if (authorization !== expected && !(options.publicRead === true && fetching)) {
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' }).end('authentication required\n');
      return;
    }
    runHttpBackend(req, res, options.baseDir, options.username);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A forgotten stop() must not keep the test process alive.
  server.unref();
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    url: (repo) => `http://127.0.0.1:${port}/${repo.replace(/^\/+/, '')}`,
    requests,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.ref();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

const SEED_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test Seed',
  GIT_AUTHOR_EMAIL: 'seed@example.invalid',
  GIT_COMMITTER_NAME: 'Test Seed',
  GIT_COMMITTER_EMAIL: 'seed@example.invalid',
};

/**
 * Creates a bare repository at `dir` (branch `main`) that allows partial
 * clones (`uploadpack.allowFilter`, `uploadpack.allowAnySHA1InWant`) and pushes
 * over HTTP. With `seed`, the callback fills a scratch working tree whose
 * content becomes the first commit on main.
 *
 * @returns `dir`
 */
export async function createBareRepository(dir: string, options: { readonly seed?: (workdir: string) => Promise<void> } = {}): Promise<string> {
  await mkdir(dirname(dir), { recursive: true });
  const cwd = dirname(dir);
  await runGit(['init', '--quiet', '--bare', '--initial-branch=main', dir], { cwd });
  for (const [key, value] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
    ['http.receivepack', 'true'],
  ] as const) {
    await runGit(['config', key, value], { cwd: dir });
  }
  if (options.seed) {
    const work = await mkdtemp(join(tmpdir(), 'gs-git-seed-'));
    try {
      await runGit(['init', '--quiet', '--initial-branch=main', work], { cwd: tmpdir() });
      await options.seed(work);
      await runGit(['add', '--all'], { cwd: work });
      await runGit(['commit', '--quiet', '--allow-empty', '--message=seed'], { cwd: work, env: SEED_IDENTITY });
      await runGit(['push', '--quiet', dir, 'main:main'], { cwd: work });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  return dir;
}
