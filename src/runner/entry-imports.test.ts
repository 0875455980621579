/**
 * `scaffold-runner --version`/`--help` and `generate-gitops-env --version` are
 * what a user, a health check or an image build runs most; they must not load
 * what only a run needs (the Kubernetes client, the forge clients, the OCI
 * client and its HTTP stack, pg), which cost 1.5 CPU-seconds a process.
 * A run loads the Kubernetes client only when it is given its cluster's
 * kubeconfig (a run given the sealing certificate talks to no cluster), and
 * the forge clients only when it delivers through a pull request.
 * The packages each one loads are recorded by a module hook in the child.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../../test/support/cli.js';
import { createTestCertificate } from '../sealing/test-certificate.js';

/** Packages (and our own modules) only a run, a publish or the service may load. */
const RUN_ONLY = [
  /^@kubernetes\/client-node$/,
  /^@octokit\//,
  /^@gitbeaker\//,
  /^pg$/,
  /^fastify$/,
  /^@fastify\//,
  /^src\/oci\//,
  /^src\/redirect-safe-fetch\./,
  /^src\/http\//,
];

let tmp: string;
let register: string;

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'entry-imports-'));
  // Reports each package (node_modules) and each of our modules (src/) once, on stderr.
  const hooks = join(tmp, 'hooks.mjs');
  await writeFile(
    hooks,
    `const seen = new Set();
export async function load(url, context, next) {
  const name = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1] ?? (url.includes('/src/') && !url.includes('node_modules') ? 'src/' + url.split('/src/').pop() : undefined);
  if (name !== undefined && !seen.has(name)) { seen.add(name); process.stderr.write('LOADED ' + name + '\\n'); }
  return next(url, context);
}
`,
  );
  register = join(tmp, 'register.mjs');
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
});

after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** What `binary args` loads, and its exit code. */
function loadedBy(binary: string, args: readonly string[]): Promise<{ code: number | null; loaded: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', pathToFileURL(register).href, join(PACKAGE_ROOT, 'src', binary), ...args], {
      cwd: PACKAGE_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stderr: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const text = Buffer.concat(stderr).toString('utf8');
      resolve({ code, loaded: [...text.matchAll(/^LOADED (.+)$/gm)].map((m) => m[1]!) });
    });
  });
}

describe('entry points load only what the invocation needs', () => {
  for (const [binary, args] of [
    ['runner-cli.ts', ['--version']],
    ['runner-cli.ts', ['--help']],
    ['cli.ts', ['--version']],
  ] as const) {
    it(`${binary} ${args.join(' ')} loads no run-only module`, async () => {
      const { code, loaded } = await loadedBy(binary, args);
      assert.equal(code, 0);
      assert.ok(loaded.includes('commander'), `the hook sees the imports: ${loaded.join(' ')}`);
      assert.deepEqual(
        loaded.filter((name) => RUN_ONLY.some((pattern) => pattern.test(name))),
        [],
      );
    });
  }

  it('a pushed run given the sealing certificate loads no Kubernetes or forge client; one given a kubeconfig loads the Kubernetes client', async () => {
    const certificate = join(tmp, 'cert.pem');
    await writeFile(certificate, createTestCertificate().certificatePem);
    const kubeconfig = join(tmp, 'kubeconfig.yaml');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    // The run starts and fails at its clone: there is no such repository.
    const run = ['--repo-url', `file://${join(tmp, 'missing.git')}`, '--cluster', 'eu-1', '--domain', 'eu-1.example.net', '--region', 'eu-west-1'];
    const files = (name: string) => ['--result-file', join(tmp, `${name}.json`), '--work-dir', join(tmp, name)];
    const byCertificate = await loadedBy('runner-cli.ts', [...run, ...files('cert'), '--cert', certificate]);
    assert.notEqual(byCertificate.code, 0);
    assert.ok(byCertificate.loaded.includes('src/runner/run-scaffold.ts'), `the run started: ${byCertificate.loaded.join(' ')}`);
    assert.ok(!byCertificate.loaded.includes('@kubernetes/client-node'), 'no Kubernetes client without a kubeconfig');
    assert.deepEqual(
      byCertificate.loaded.filter((name) => /^@(octokit|gitbeaker)\//.test(name)),
      [],
      'a pushed run loads no forge client',
    );
    const byKubeconfig = await loadedBy('runner-cli.ts', [...run, ...files('kube'), '--kubeconfig', kubeconfig]);
    assert.ok(byKubeconfig.loaded.includes('@kubernetes/client-node'), `the hook sees the Kubernetes client: ${byKubeconfig.loaded.join(' ')}`);
  });
});
