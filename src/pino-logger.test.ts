import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPino, loggerFromPino } from './pino-logger.js';

const TOKEN = 'tok-3f9c1b7e5d2a4c6e8f0a';
const PASSWORD = 'pw-a1b2c3d4e5f6a7b8';
const KUBE_TOKEN = 'kube-9e8d7c6b5a4f3e2d';
const REGISTRY = JSON.stringify({
  auths: { 'registry.example.net': { username: 'u', password: PASSWORD, auth: Buffer.from(`u:${PASSWORD}`).toString('base64') } },
});
const KUBECONFIG = `apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: ${KUBE_TOKEN}}}]\n`;
const NEEDLES = [TOKEN, PASSWORD, KUBE_TOKEN, Buffer.from(`u:${PASSWORD}`).toString('base64'), Buffer.from(`x:${TOKEN}`).toString('base64')];

/** The real pino logger, lines captured. */
function capture(): { lines: string[]; logger: ReturnType<typeof loggerFromPino> } {
  const lines: string[] = [];
  const pino = createPino({ level: 'debug', destination: { write: (chunk: string) => void lines.push(...chunk.split('\n').filter(Boolean)) } });
  return { lines, logger: loggerFromPino(pino) };
}

describe('the pino logger censors credentials', () => {
  const request = {
    cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' },
    repository: { url: 'https://git.example.net/platform/gitops.git', credentials: { username: 'x', token: TOKEN } },
    kubeconfig: { inline: KUBECONFIG },
    registry_pull_secret: { dockerconfigjson: REGISTRY },
  };
  const runSecrets = { repositoryCredentials: { token: TOKEN }, kubeconfig: { kind: 'inline', value: KUBECONFIG }, registryDockerconfigjson: REGISTRY };
  const cases: [string, Record<string, unknown>][] = [
    ['a request body as the fields', request],
    ['a request body under body', { body: request }],
    ['a request under req', { req: { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, cookie: `session=${TOKEN}` }, body: request } }],
    ['headers', { headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } }],
    ["a run's secrets", { run: 'r-1', secrets: runSecrets }],
    ['RunSecrets fields', runSecrets],
    ["a child process's environment", { pid: 1, env: { SCAFFOLD_GIT_TOKEN: TOKEN, SCAFFOLD_KUBECONFIG_DATA: KUBECONFIG, SCAFFOLD_REGISTRY_AUTH: REGISTRY } }],
    ['credentials under any key', { options: { credentials: { kind: 'token', token: TOKEN } }, auth: { password: PASSWORD }, git: { token: TOKEN } }],
    ['an ssh key and registry auth', { privateKey: `-----BEGIN OPENSSH PRIVATE KEY-----\n${TOKEN}\n`, registryAuth: REGISTRY, dockerconfigjson: REGISTRY }],
  ];

  for (const [title, fields] of cases) {
    it(`in ${title}`, () => {
      const { lines, logger } = capture();
      logger.child({ component: 'test' }).info(fields, 'logged');
      assert.equal(lines.length, 1);
      for (const needle of NEEDLES) assert.ok(!lines[0]!.includes(needle), `${needle} in ${lines[0]}`);
      assert.match(lines[0]!, /\[redacted\]/);
    });
  }

  it('keeps the fields that are not credentials', () => {
    const { lines, logger } = capture();
    logger.info({ ...request, event: 'step_finished', step: 1 }, 'logged');
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.deepEqual(line.cluster, request.cluster);
    assert.deepEqual(line.repository, { url: request.repository.url, credentials: '[redacted]' });
    assert.equal(line.event, 'step_finished');
  });
});

describe('the pino logger loads what its output needs', () => {
  /** Runs `script` in a child process (stdout a pipe, as in a Job) and returns what it printed. */
  async function inChild(script: string): Promise<string> {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: dirname(fileURLToPath(import.meta.url)),
      timeout: 20_000,
    });
    return stdout;
  }
  const loadedPretty = `Object.keys((await import('node:module')).createRequire(import.meta.url).cache).some((p) => p.includes('/node_modules/pino-pretty/'))`;

  it('writes JSON lines without loading pino-pretty, which a runner Job never uses', async () => {
    const out = await inChild(
      `const { createPinoLogger } = await import('./pino-logger.ts'); createPinoLogger().info({ event: 'x' }, 'hello'); console.log('pretty loaded:', ${loadedPretty});`,
    );
    const [line, loaded] = out.trim().split('\n');
    assert.equal((JSON.parse(line!) as { msg: string }).msg, 'hello');
    assert.equal(loaded, 'pretty loaded: false');
  });

  it('writes human-readable lines for a terminal, credentials still censored', async () => {
    const out = await inChild(
      `const { createPinoLogger } = await import('./pino-logger.ts'); createPinoLogger({ pretty: true }).info({ token: '${TOKEN}', cluster: 'eu-prod-1' }, 'hello');`,
    );
    assert.match(out, /INFO.*hello/);
    assert.match(out, /cluster: "eu-prod-1"/);
    assert.ok(!out.includes(TOKEN));
    assert.throws(() => JSON.parse(out.trim().split('\n')[0]!));
  });
});
