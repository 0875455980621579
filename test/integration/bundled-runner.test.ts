/**
 * The bundle (scripts/bundle.mjs) is what package.json's bins and the runner
 * image run, so it is tested as shipped: bundled afresh into a directory of
 * its own under the package root (its code cache trained, as the runner
 * image trains it), then run as a Job runs it, `node <bundle>/scaffold-runner.js`,
 * through a real git daemon, the real `kubectl kustomize` and the Kubernetes
 * API double (client-node inside the bundle). Every other runner test runs
 * the source through tsx.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BUNDLE_ENTRIES, bundle } from '../../scripts/bundle.mjs';
import { RUNNER_CODE_MANIFEST, readRunnerCodeManifest } from '../../src/process/runner-code.js';
import { ensureSeededBareRepository } from '../../src/git/seed-repository.js';
import { packageVersion, platformDir } from '../../src/package-paths.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { type GitDaemon, startGitDaemon } from '../support/git-server.js';
import { startKubeApiDouble } from '../support/kube-api-double.js';
import { REPO_ROOT, commitsOf, describeOutcome, runRunner, sealedSecretsIn, treeAt, unsealAll } from '../support/runner.js';
import { git } from '../support/git.js';

const CLUSTER = { name: 'bundle-1', domain: 'bundle-1.example.net', region: 'eu-west-1' } as const;
const GITOPS_PATH = `clusters/${CLUSTER.name}`;
const run = promisify(execFile);
/** A variable no runner reads: marks the case of the comparison run under another node's manifest. */
const OTHER_NODE = 'TEST_OTHER_NODE';

let bundleDir: string;
let scratch: string;
let seedRepo: string;
let daemon: GitDaemon;
let remotes = 0;

/** A verified scaffold of CLUSTER into `url`, sealed for `certFile`, with the debug lines (how the runner's code started). */
function scaffoldArgs(url: string, certFile: string): string[] {
  return ['--repo-url', url, '--cluster', CLUSTER.name, '--domain', CLUSTER.domain, '--region', CLUSTER.region, '--cert', certFile, '--log-level', 'debug'];
}

/** A bare remote holding the seeded platform, served by the daemon. */
async function newRemote(): Promise<{ url: string; dir: string; seed: string }> {
  const name = `remote-${++remotes}.git`;
  const dir = join(scratch, 'served', name);
  await git(scratch, 'clone', '--quiet', '--bare', seedRepo, dir);
  return { url: daemon.url(name), dir, seed: await git(dir, 'rev-parse', 'main') };
}

before(async () => {
  // Under the package root, as dist/bundle is: the code finds platform/ and schemas/ above itself.
  const cache = join(REPO_ROOT, 'node_modules', '.cache');
  await mkdir(cache, { recursive: true });
  bundleDir = await mkdtemp(join(cache, 'gitops-scaffolder-bundle-test-'));
  await bundle(bundleDir);
  scratch = await mkdtemp(join(tmpdir(), 'gs-bundle-it-'));
  await mkdir(join(scratch, 'served'));
  await mkdir(join(scratch, 'tmp'));
  seedRepo = join(scratch, 'seed.git');
  await ensureSeededBareRepository(seedRepo, platformDir());
  daemon = await startGitDaemon({ baseDir: join(scratch, 'served') });
});

after(async () => {
  await daemon?.stop();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  if (bundleDir !== undefined) await rm(bundleDir, { recursive: true, force: true });
});

describe('the bundled binaries', () => {
  it('holds, beside the bins, every file the code starts by path next to itself (the spawn helper, the planning worker)', async () => {
    const bundled = new Set(await readdir(bundleDir));
    const started = new Set<string>();
    for (const entry of await readdir(join(REPO_ROOT, 'src'), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts') || /\.(test|contract)\.ts$/.test(entry.name)) continue;
      const text = await readFile(join(entry.parentPath, entry.name), 'utf8');
      // `new URL('./x.js', import.meta.url)`, or the helper's `./x.${typescript ? 'ts' : 'js'}` against its own URL.
      for (const match of text.matchAll(/new URL\(\s*[`'"]\.\/([\w.-]+?)\.(?:js|\$\{[^}]*\})[`'"]\s*,\s*(?:import\.meta\.url|self)\s*\)/g))
        started.add(match[1]!);
    }
    assert.ok(started.has('spawn-helper-main') && started.has('upgrade-plan-worker'), `found ${[...started].join(', ')}`);
    for (const name of started) {
      assert.ok(bundled.has(`${name}.js`), `${name}.js is started beside the code that names it: the bundle must hold it`);
      assert.ok(
        BUNDLE_ENTRIES.some((e) => e.endsWith(`/${name}.ts`)),
        `${name}.ts is an entry of scripts/bundle.mjs`,
      );
    }
  });

  it('answers --version and --help for both bins', async () => {
    for (const bin of ['scaffold-runner.js', 'runner-cli.js', 'cli.js']) {
      const version = await run(process.execPath, [join(bundleDir, bin), '--version'], { timeout: 20_000 });
      assert.equal(version.stdout.trim(), packageVersion());
      const help = await run(process.execPath, [join(bundleDir, bin), '--help'], { timeout: 20_000 });
      assert.match(help.stdout, /^Usage: (scaffold-runner|generate-gitops-env) /);
    }
  });

  it('names a trained code cache for the runner, made of the CommonJS script it ships beside', async () => {
    const manifest = readRunnerCodeManifest(bundleDir);
    assert.ok(manifest !== undefined, 'the bundle holds runner-code.json');
    assert.match(manifest.script, /^runner-[A-Z0-9]+\.cjs$/, 'the script is named after its content');
    assert.equal(manifest.codeCache, `${manifest.script}.cache`, 'the training named its cache');
    assert.equal(manifest.node, process.version, 'and the node that trained it');
    const bundled = new Set(await readdir(bundleDir));
    assert.ok(bundled.has(manifest.script) && bundled.has(manifest.codeCache));
    assert.ok(![...bundled].some((name) => name.endsWith('.partial')), 'nothing half-written stays');
    // Compiled code, not the training run's data: neither its cluster nor its throwaway key's certificate.
    const cache = (await readFile(join(bundleDir, manifest.codeCache))).toString('latin1');
    assert.ok(!cache.includes('code-cache-training'), "the training cluster's name is not in the cache");
    assert.doesNotMatch(cache, /MII[A-Za-z0-9+/]{40}/, 'no certificate body is in the cache');
  });

  it('runs a verified two-pass scaffold with --cert from the code cache: both passes land, sealed for the given key', async () => {
    const certificate = createTestCertificate();
    const certFile = join(scratch, 'cert.pem');
    await writeFile(certFile, certificate.certificatePem);
    const remote = await newRemote();
    const resultFile = join(scratch, 'result-cert.json');
    const outcome = await runRunner({
      script: join(bundleDir, 'scaffold-runner.js'),
      args: scaffoldArgs(remote.url, certFile),
      env: { TMPDIR: join(scratch, 'tmp'), SCAFFOLD_RESULT_FILE: resultFile },
      resultFile,
    });
    assert.equal(outcome.code, 0, describeOutcome(outcome));
    // V8 took the trained cache: the run's code came from it, not from a compile of the source.
    assert.deepEqual(
      outcome.events.filter((e) => e['codeCache'] !== undefined).map((e) => e['codeCache']),
      ['accepted'],
    );
    assert.equal(outcome.result?.status, 'succeeded', describeOutcome(outcome));
    assert.deepEqual(outcome.nonJsonLines, [], 'one JSON event a line');
    // Verify ran in both passes (kubectl, the CRD table and ajv, from inside the bundle), the second from the run's cache too.
    const verified = outcome.events.filter((e) => e.event === 'verified');
    assert.equal(verified.length, 2, describeOutcome(outcome));
    const commits = (await commitsOf(remote.dir, 'main', remote.seed)).reverse();
    assert.deepEqual(
      commits.map((c) => c.trailers['Scaffold-Pass']),
      ['infrastructure', 'all'],
    );
    const sealed = sealedSecretsIn(await treeAt(remote.dir, 'main', GITOPS_PATH));
    assert.ok(sealed.length >= 3, 'pass 2 holds the SealedSecrets');
    assert.ok(unsealAll(sealed, certificate.privateKey).size >= 5, "every value opens with the cluster's key");
  });

  it('writes the same tree from the code cache as from the ES modules, whether asked for (SCAFFOLD_CODE_CACHE=off) or because V8 rejects the cache', async () => {
    const certificate = createTestCertificate();
    const certFile = join(scratch, 'cert-same.pem');
    await writeFile(certFile, certificate.certificatePem);
    const trees: Map<string, string>[] = [];
    // A V8 flag the cache was not made under (here through NODE_OPTIONS, as an operator sets a heap size): V8 rejects it.
    for (const [mode, env, logged] of [
      ['cache', {}, ['accepted']],
      ['off', { SCAFFOLD_CODE_CACHE: 'off' }, []],
      ['other flags', { NODE_OPTIONS: '--max-old-space-size=1024' }, ['rejected']],
      ['another node', { [OTHER_NODE]: '1' }, ['other-node']],
    ] as const) {
      const manifestFile = join(bundleDir, RUNNER_CODE_MANIFEST);
      const trained = await readFile(manifestFile, 'utf8');
      // As if a node other than this one had trained the cache: the bin does not even try it.
      if (OTHER_NODE in env) await writeFile(manifestFile, JSON.stringify({ ...JSON.parse(trained), node: 'v0.0.1' }));
      const remote = await newRemote();
      const resultFile = join(scratch, `result-same-${remotes}.json`);
      const outcome = await runRunner({
        script: join(bundleDir, 'scaffold-runner.js'),
        args: scaffoldArgs(remote.url, certFile),
        env: { TMPDIR: join(scratch, 'tmp'), SCAFFOLD_RESULT_FILE: resultFile, ...env },
        resultFile,
      }).finally(() => writeFile(manifestFile, trained));
      assert.equal(outcome.result?.status, 'succeeded', `${mode}: ${describeOutcome(outcome)}`);
      assert.deepEqual(
        outcome.events.filter((e) => e['codeCache'] !== undefined).map((e) => e['codeCache']),
        logged,
        mode,
      );
      trees.push(await treeAt(remote.dir, 'main', GITOPS_PATH));
    }
    const [cached, ...others] = trees as [Map<string, string>, ...Map<string, string>[]];
    for (const other of others) {
      assert.deepEqual([...cached.keys()].sort(), [...other.keys()].sort());
      // Sealed values (fresh credentials, fresh session keys) differ run by run; every other file is the same text.
      const differing = [...cached.keys()].filter((path) => cached.get(path) !== other.get(path));
      assert.ok(differing.length > 0 && differing.length < cached.size / 2, `differing: ${differing.join(', ')}`);
      for (const path of differing) assert.match(cached.get(path)!, /encryptedData:/, `${path} differs, and holds no sealed value`);
    }
  });

  it("fetches the cluster's certificate through the Kubernetes API with a kubeconfig (client-node inside the bundle)", async () => {
    const clusterCert = createTestCertificate();
    const kube = await startKubeApiDouble();
    try {
      const kubeconfig = await kube.writeKubeconfig(await mkdtemp(join(scratch, 'kube-')));
      kube.setService('kube-system', 'sealed-secrets-controller', { ports: [{ name: 'http', port: 8080 }] });
      kube.setProxyHandler('kube-system', 'sealed-secrets-controller', 'http', (request) =>
        request.path === '/v1/cert.pem' ? { status: 200, body: clusterCert.certificatePem } : { status: 404, body: 'not found\n' },
      );
      kube.setDeploymentAvailable('kube-system', 'sealed-secrets-controller', true);
      const remote = await newRemote();
      const resultFile = join(scratch, 'result-kube.json');
      const outcome = await runRunner({
        script: join(bundleDir, 'scaffold-runner.js'),
        args: ['--repo-url', remote.url, '--cluster', CLUSTER.name, '--domain', CLUSTER.domain, '--region', CLUSTER.region, '--controller-timeout', '60s'],
        env: { TMPDIR: join(scratch, 'tmp'), SCAFFOLD_KUBECONFIG: kubeconfig, SCAFFOLD_RESULT_FILE: resultFile },
        resultFile,
      });
      assert.equal(outcome.code, 0, describeOutcome(outcome));
      assert.ok(
        outcome.events.some((e) => e.event === 'step_finished' && e.step === 5),
        'step 5 fetched the certificate',
      );
      const sealed = sealedSecretsIn(await treeAt(remote.dir, 'main', GITOPS_PATH));
      assert.ok(unsealAll(sealed, clusterCert.privateKey).size >= 5, 'sealed with the certificate the API served');
    } finally {
      await kube.stop();
    }
  });
});
