/**
 * `scaffold-runner --version`/`--help` and `generate-gitops-env --version` are
 * what a user, a health check or an image build runs most; they must not load
 * what only a run needs (the Kubernetes client, the forge clients, the OCI
 * client and its HTTP stack, pg), which cost 1.5 CPU-seconds a process.
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
});
