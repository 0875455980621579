/**
 * `generate-gitops-env` as a user runs it: real child processes against real
 * Git work trees in the temp directory, with the real kubectl kustomize and CRD
 * schemas behind verify. What is checked is what a user sees: exit codes,
 * stdout, stderr, and the files left on disk.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { scopeLabel } from '../../src/sealing/seal.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { unsealValue } from '../../src/sealing/unseal.js';
import { assertExit, runCli, type CliResult } from '../support/cli.js';
import { writeFluxBootstrap } from '../support/flux-bootstrap.js';
import { gitSync as git } from '../support/git.js';

const CLUSTER_ARGS = ['--cluster', 'eu-prod-1', '--domain', 'eu-prod-1.example.net', '--region', 'eu-west-1'];
const SUMMARY = /^==> 4 Flux Kustomization\(s\) checked; substitution wiring is consistent$/m;
// No --registry-auth: no pull secret (public images); a registry password is never invented.
const SEALED_FILES = [
  'clusters/eu-prod-1/apps/sealed/sealed-tcr-database.yaml',
  'clusters/eu-prod-1/database/sealed/sealed-postgresql-credentials.yaml',
  'clusters/eu-prod-1/database/sealed/sealed-rabbitmq-credentials.yaml',
];

const controller = createTestCertificate();

function unsealFile(text: string): Record<string, string> {
  const sealed = parse(text) as { metadata: { name: string; namespace: string }; spec: { encryptedData: Record<string, string> } };
  const label = scopeLabel('strict', sealed.metadata.namespace, sealed.metadata.name);
  return Object.fromEntries(
    Object.entries(sealed.spec.encryptedData).map(([key, ciphertext]) => [
      key,
      unsealValue({ privateKey: controller.privateKey, label, ciphertext }).toString('utf8'),
    ]),
  );
}

/** Every file below `dir`, `.git` excluded. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && !join(e.parentPath, e.name).split('/').includes('.git')).map((e) => join(e.parentPath, e.name));
}

async function makeTemp(prefix: string): Promise<{ dir: string; cert: string }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const cert = join(dir, 'sealing-cert.pem');
  await writeFile(cert, controller.certificatePem);
  return { dir, cert };
}

describe('generate-gitops-env: a new cluster from init to verify', () => {
  let tmp: string;
  let cert: string;
  let repo: string;
  let initResult: CliResult;

  before(async () => {
    ({ dir: tmp, cert } = await makeTemp('cli-e2e-'));
    repo = join(tmp, 'gitops');
    initResult = await runCli(['init', repo]);
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('init makes a new Git repository holding the reference platform, committed', async () => {
    assertExit(initResult, 0);
    assert.match(initResult.stdout, /^[0-9a-f]{40}\n$/);
    assert.equal(git(repo, 'rev-parse', 'HEAD'), initResult.stdout);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.deepEqual((await readdir(repo)).sort(), ['.git', 'README.md', 'base', 'clusters', 'renovate.json', 'scaffold.yaml']);
    assert.deepEqual(await readdir(join(repo, 'clusters')), ['development']);
  });

  it('renders pass infrastructure, then pass all with --cert, and verify passes', async () => {
    const infra = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--pass', 'infrastructure']);
    assertExit(infra, 0);
    assert.equal(infra.stdout, 'clusters/eu-prod-1\n');
    assert.match(infra.stderr, /^ {2}layers: infrastructure$/m);
    assert.doesNotMatch(infra.stderr, /credential/);

    const all = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--pass', 'all', '--cert', cert]);
    assertExit(all, 0);
    assert.equal(all.stdout, 'clusters/eu-prod-1\n');
    for (const name of ['tcr/tcr-database', 'database/postgresql-credentials', 'database/rabbitmq-credentials']) {
      assert.match(all.stderr, new RegExp(`credential ${name}: generated`));
    }
    assert.match(
      all.stderr,
      /^ {2}credential tcr\/registry-pull-secret: omitted, no --registry-auth given: no pull secret is written, images are pulled anonymously \(public images only\)$/m,
    );
    for (const file of await filesBelow(join(repo, 'clusters/eu-prod-1'))) {
      assert.ok(!file.includes('registry-pull-secret') && !(await readFile(file, 'utf8')).includes('tcr-pull'), `${file}: a pull secret nobody supplied`);
    }

    const verify = await runCli(['verify', '--repo', repo, '--cluster', 'eu-prod-1']);
    assertExit(verify, 0);
    assert.equal(verify.stdout, '');
    assert.match(verify.stderr, SUMMARY);
    assert.equal(git(repo, 'status', '--porcelain'), '?? clusters/eu-prod-1/\n');
  });

  it('converges: a second render changes nothing and prints no credential; --rotate-credentials re-seals every credential', async () => {
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'Add cluster eu-prod-1');
    const before = await Promise.all(SEALED_FILES.map(async (f) => unsealFile(await readFile(join(repo, f), 'utf8'))));

    const again = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--cert', cert]);
    assertExit(again, 0);
    for (const value of before.flatMap((v) => Object.values(v))) {
      assert.ok(!again.stdout.includes(value) && !again.stderr.includes(value), 'a credential was printed');
    }
    assert.match(again.stderr, / 0 written, \d+ unchanged, 0 removed/);
    assert.match(again.stderr, /credential database\/postgresql-credentials: kept/);
    assert.equal(git(repo, 'status', '--porcelain'), '');

    const infraAgain = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--pass', 'infrastructure']);
    assertExit(infraAgain, 0);
    assert.match(infraAgain.stderr, /so no layer is taken away/);
    assert.equal(git(repo, 'status', '--porcelain'), '', 'pass infrastructure took layers away');

    const rotated = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--cert', cert, '--rotate-credentials']);
    assertExit(rotated, 0);
    assert.deepEqual(git(repo, 'diff', '--name-only').trim().split('\n').sort(), SEALED_FILES);
    const after = await Promise.all(SEALED_FILES.map(async (f) => unsealFile(await readFile(join(repo, f), 'utf8'))));
    after.forEach((data, i) => {
      for (const [key, value] of Object.entries(data)) assert.notEqual(value, before[i]![key], `${SEALED_FILES[i]} ${key}`);
    });
    git(repo, 'commit', '--quiet', '--all', '-m', 'Rotate the credentials of eu-prod-1');
  });

  it('draws the Flux graph in json, mermaid, dot and svg', async () => {
    const graph = (format: string) => runCli(['graph', '--repo', repo, '--cluster', 'eu-prod-1', '--format', format]);
    const [json, mermaid, dot, svg] = await Promise.all(['json', 'mermaid', 'dot', 'svg'].map(graph));
    for (const r of [json, mermaid, dot, svg]) assertExit(r!, 0);

    const parsed = JSON.parse(json!.stdout) as { nodes: { name: string; dependsOn: string[] }[]; edges: { from: string; to: string }[] };
    assert.deepEqual(parsed.nodes.map((n) => `${n.name}<-${n.dependsOn.join(',')}`).sort(), [
      'apps<-flux-system/database,flux-system/infrastructure',
      'cert-manager-config<-flux-system/infrastructure',
      'database<-flux-system/infrastructure',
      'infrastructure<-',
    ]);
    // Everything waits for infrastructure; apps also for database, whose PostgreSQL it connects to.
    assert.equal(parsed.edges.length, 4);
    assert.deepEqual(
      parsed.edges.filter((e) => e.from !== 'flux-system/infrastructure').map((e) => `${e.from} -> ${e.to}`),
      ['flux-system/database -> flux-system/apps'],
    );

    assert.match(mermaid!.stdout, /^flowchart TD\n/);
    assert.equal(mermaid!.stdout.match(/k_flux_system_infrastructure --> /g)?.length, 3);
    assert.match(dot!.stdout, /^digraph /);
    assert.equal(dot!.stdout.match(/"flux-system\/infrastructure" -> /g)?.length, 3);
    assert.match(svg!.stdout, /^<\?xml[^>]*>\s*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/);
    assert.match(svg!.stdout.trimEnd(), /<\/svg>$/);
  });

  it('uses exactly the given --registry-auth file as the pull secret of a new cluster', async () => {
    const dockerconfig =
      '{"auths":{"registry.eu-prod-2.example.net":{"username":"robot","password":"s3cr3t-Pull-Token","auth":"cm9ib3Q6czNjcjN0LVB1bGwtVG9rZW4="}}}\n';
    const file = join(tmp, 'registry-auth.json');
    await writeFile(file, dockerconfig);
    const result = await runCli([
      'render',
      '--repo',
      repo,
      '--cluster',
      'eu-prod-2',
      '--domain',
      'eu-prod-2.example.net',
      '--region',
      'eu-west-1',
      '--cert',
      cert,
      '--registry-auth',
      file,
    ]);
    assertExit(result, 0);
    assert.match(result.stderr, /credential tcr\/registry-pull-secret: supplied/);
    const sealed = await readFile(join(repo, 'clusters/eu-prod-2/apps/sealed/sealed-registry-pull-secret.yaml'), 'utf8');
    assert.deepEqual(unsealFile(sealed), { '.dockerconfigjson': dockerconfig });
    for (const path of await filesBelow(repo)) {
      const text = await readFile(path, 'utf8');
      for (const plain of ['s3cr3t-Pull-Token', 'cm9ib3Q6czNjcjN0LVB1bGwtVG9rZW4=', Buffer.from(dockerconfig).toString('base64')]) {
        assert.ok(!text.includes(plain), `${path} holds the pull secret in plain text`);
      }
    }
  });

  it('verify exits 1 with one finding a line when the tree is broken', async () => {
    const config = join(repo, 'clusters/eu-prod-1/flux/cluster-config.yaml');
    const original = await readFile(config, 'utf8');
    await writeFile(config, original.replace(/^ {2}storage_class: gp3\n/m, ''));
    try {
      const result = await runCli(['verify', '--repo', repo, '--cluster', 'eu-prod-1']);
      assertExit(result, 1);
      const findings = result.stdout.trimEnd().split('\n');
      assert.ok(findings.length >= 1);
      assert.ok(
        findings.every((line) => line.includes('storage_class')),
        result.stdout,
      );
      assert.doesNotMatch(result.stderr, SUMMARY);
    } finally {
      await writeFile(config, original);
    }
  });
});

describe('generate-gitops-env render: bad input gets one clear error, exit 2, and nothing is written', { concurrency: 4 }, () => {
  let tmp: string;
  let cert: string;
  let repo: string;
  const files: Record<string, string> = {};

  before(async () => {
    ({ dir: tmp, cert } = await makeTemp('cli-bad-input-'));
    repo = join(tmp, 'gitops');
    assertExit(await runCli(['init', repo]), 0);
    files.notCert = join(tmp, 'not-a-cert.pem');
    await writeFile(files.notCert, 'this is not a certificate\n');
    files.badAuth = join(tmp, 'registry-auth.json');
    await writeFile(files.badAuth, '{"auths": {"registry.example.net": hunter2\n');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const spec = (overrides: Record<string, string>) => {
    const values = { '--cluster': 'eu-prod-1', '--domain': 'eu-prod-1.example.net', '--region': 'eu-west-1', ...overrides };
    return Object.entries(values).flat();
  };

  const cases: { title: string; args: () => string[]; error: RegExp }[] = [
    {
      title: 'cluster name ../evil',
      args: () => [...spec({ '--cluster': '../evil' }), '--pass', 'infrastructure'],
      error: /^error: --cluster: must be a DNS-1123 label/,
    },
    {
      title: 'cluster name Eu-Prod',
      args: () => [...spec({ '--cluster': 'Eu-Prod' }), '--pass', 'infrastructure'],
      error: /^error: --cluster: must be a DNS-1123 label/,
    },
    {
      title: 'cluster name of 64 characters',
      args: () => [...spec({ '--cluster': 'a'.repeat(64) }), '--pass', 'infrastructure'],
      error: /^error: --cluster: must be at most 63 characters/,
    },
    {
      title: 'cluster name of the reference',
      args: () => [...spec({ '--cluster': 'development' }), '--pass', 'infrastructure'],
      error: /^error: --cluster: must differ from the reference environment "development"/,
    },
    {
      title: 'domain localhost',
      args: () => [...spec({ '--domain': 'localhost' }), '--pass', 'infrastructure'],
      error: /^error: --domain: must be a lower-case DNS name/,
    },
    {
      title: 'domain -bad.example.com',
      args: () => [...spec({ '--domain': '-bad.example.com' }), '--pass', 'infrastructure'],
      error: /^error: --domain: must be a lower-case DNS name/,
    },
    {
      title: 'domain a..b',
      args: () => [...spec({ '--domain': 'a..b' }), '--pass', 'infrastructure'],
      error: /^error: --domain: must be a lower-case DNS name/,
    },
    {
      title: 'region EU_WEST',
      args: () => [...spec({ '--region': 'EU_WEST' }), '--pass', 'infrastructure'],
      error: /^error: --region: must look like a cloud region/,
    },
    {
      title: 'a reference that does not exist',
      args: () => [...spec({}), '--pass', 'infrastructure', '--reference', 'staging'],
      error: /^error: reference environment clusters\/staging\/ does not exist .*--reference/,
    },
    {
      title: '--pass all without --cert',
      args: () => [...spec({}), '--pass', 'all'],
      error: /^error: --cert: --pass all seals credentials and needs the cluster's certificate/,
    },
    {
      title: 'an unreadable certificate file',
      args: () => [...spec({}), '--cert', join(tmp, 'missing.pem')],
      error: /^error: --cert: cannot read .*missing\.pem: ENOENT$/,
    },
    {
      title: 'a certificate file that is not a certificate',
      args: () => [...spec({}), '--cert', files.notCert!],
      error: /^error: --cert: no PEM certificate found/,
    },
    {
      title: 'a --registry-auth file that is not JSON',
      args: () => [...spec({}), '--cert', cert, '--registry-auth', files.badAuth!],
      error: /^error: --registry-auth: is not valid JSON/,
    },
  ];

  for (const { title, args, error } of cases) {
    it(title, async () => {
      const result = await runCli(['render', '--repo', repo, ...args()]);
      assertExit(result, 2);
      const errors = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
      assert.equal(errors.length, 1, result.stderr);
      assert.match(errors[0]!, error);
      assert.ok(!result.stderr.includes('hunter2'), 'the error echoes the registry credentials');
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace is not a clear error');
      assert.equal(result.stdout, '');
      assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'something was written');
    });
  }
});

describe('generate-gitops-env seal', () => {
  let tmp: string;
  let cert: string;

  before(async () => {
    ({ dir: tmp, cert } = await makeTemp('cli-seal-'));
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it("turns a Secret manifest on stdin into a SealedSecret that decrypts with the cluster's key", async () => {
    const manifest = [
      'apiVersion: v1',
      'kind: Secret',
      'metadata:',
      '  name: api-token',
      '  namespace: tcr',
      'type: Opaque',
      'data:',
      `  token: ${Buffer.from('tok-9f8e7d6c5b4a').toString('base64')}`,
      'stringData:',
      '  webhook-secret: whsec-0123456789abcdef',
      '',
    ].join('\n');
    const result = await runCli(['seal', '--cert', cert], { stdin: manifest });
    assertExit(result, 0);
    const sealed = parse(result.stdout) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string };
      spec: { template: { type: string } };
    };
    assert.equal(sealed.apiVersion, 'bitnami.com/v1alpha1');
    assert.equal(sealed.kind, 'SealedSecret');
    assert.deepEqual({ name: sealed.metadata.name, namespace: sealed.metadata.namespace }, { name: 'api-token', namespace: 'tcr' });
    assert.equal(sealed.spec.template.type, 'Opaque');
    assert.deepEqual(unsealFile(result.stdout), { token: 'tok-9f8e7d6c5b4a', 'webhook-secret': 'whsec-0123456789abcdef' });
    for (const plain of ['tok-9f8e7d6c5b4a', Buffer.from('tok-9f8e7d6c5b4a').toString('base64'), 'whsec-0123456789abcdef']) {
      assert.ok(!result.stdout.includes(plain) && !result.stderr.includes(plain));
    }
  });

  it('takes the namespace and name from --namespace and --name, binding the value to them', async () => {
    const manifest = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: ignored\nstringData:\n  password: pa55-word-xyz\n';
    const result = await runCli(['seal', '--cert', cert, '--namespace', 'database', '--name', 'backup-credentials'], { stdin: manifest });
    assertExit(result, 0);
    const sealed = parse(result.stdout) as { metadata: { name: string; namespace: string } };
    assert.deepEqual({ name: sealed.metadata.name, namespace: sealed.metadata.namespace }, { name: 'backup-credentials', namespace: 'database' });
    assert.deepEqual(unsealFile(result.stdout), { password: 'pa55-word-xyz' });
  });

  it('refuses input that is not a Secret, with exit 2 and nothing on stdout', async () => {
    const result = await runCli(['seal', '--cert', cert], { stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: y}\n' });
    assertExit(result, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^error: kind: must be Secret/m);
  });
});

describe('generate-gitops-env on a cluster path that flux bootstrap wrote flux-system/ into', () => {
  let tmp: string;
  let cert: string;
  let repo: string;
  let bootstrap: Map<string, string>;

  before(async () => {
    ({ dir: tmp, cert } = await makeTemp('cli-bootstrap-'));
    repo = join(tmp, 'gitops');
    assertExit(await runCli(['init', repo]), 0);
    bootstrap = await writeFluxBootstrap(repo, 'eu-prod-1');
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'flux bootstrap');
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('render keeps flux-system/ byte for byte and listed in the entry point, in both passes, and verify passes', async () => {
    for (const pass of [
      ['--pass', 'infrastructure'],
      ['--cert', cert],
    ]) {
      const result = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, ...pass]);
      assertExit(result, 0);
      assert.match(
        result.stderr,
        / 0 removed\n {2}kept as they are and listed in clusters\/eu-prod-1\/kustomization\.yaml: flux-system\/ \(not generated, e\.g\. by flux bootstrap\)\n/,
      );
      for (const [path, text] of bootstrap) assert.equal(await readFile(join(repo, path), 'utf8'), text, `${path} after ${pass.join(' ')}`);
      const entry = parse(await readFile(join(repo, 'clusters/eu-prod-1/kustomization.yaml'), 'utf8')) as { resources: string[] };
      assert.deepEqual(entry.resources, ['flux', 'flux-system']);
    }
    const verify = await runCli(['verify', '--repo', repo, '--cluster', 'eu-prod-1']);
    assertExit(verify, 0);
    assert.match(verify.stderr, /==> 5 Flux Kustomization\(s\) checked; substitution wiring is consistent/);
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'Add cluster eu-prod-1');
  });

  it('verify exits 1 on a commit that dropped flux-system/ (as the old render did), naming the commit and the fix', async () => {
    const before = git(repo, 'rev-parse', 'HEAD').trim();
    git(repo, 'rm', '-r', '--quiet', 'clusters/eu-prod-1/flux-system');
    const entry = join(repo, 'clusters/eu-prod-1/kustomization.yaml');
    await writeFile(entry, (await readFile(entry, 'utf8')).replace(/^ {2}- flux-system\n/m, ''));
    git(repo, 'commit', '--quiet', '--all', '-m', 'Re-render eu-prod-1');
    try {
      const result = await runCli(['verify', '--repo', repo, '--cluster', 'eu-prod-1']);
      assertExit(result, 1);
      const short = before.slice(0, 12);
      assert.deepEqual(result.stdout.trimEnd().split('\n'), [
        `clusters/eu-prod-1/flux-system: Kustomization flux-system/flux-system: flux-system/ was in commit ${short} and is gone: the sync (prune: true) would delete Flux itself; restore it with \`git checkout ${short} -- clusters/eu-prod-1/flux-system\` and keep it in clusters/eu-prod-1's kustomization resources`,
      ]);
    } finally {
      git(repo, 'reset', '--quiet', '--hard', before);
    }
  });

  it('verify exits 1 when the entry point does not list an existing flux-system/', async () => {
    const entry = join(repo, 'clusters/eu-prod-1/kustomization.yaml');
    await writeFile(entry, (await readFile(entry, 'utf8')).replace(/^ {2}- flux-system\n/m, ''));
    try {
      const result = await runCli(['verify', '--repo', repo, '--cluster', 'eu-prod-1']);
      assertExit(result, 1);
      assert.ok(
        result.stdout
          .split('\n')
          .includes(
            'clusters/eu-prod-1/kustomization.yaml: Kustomization flux-system/flux-system: resources does not list flux-system, so the sync (prune: true) would delete what flux bootstrap installed, Flux included: add flux-system to resources',
          ),
        result.stdout,
      );
    } finally {
      git(repo, 'checkout', '--quiet', '--', 'clusters/eu-prod-1/kustomization.yaml');
    }
  });
});

describe('generate-gitops-env init into a directory that is not empty', () => {
  let tmp: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'cli-init-'));
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('fails with a clear message and leaves the directory untouched', async () => {
    const dir = join(tmp, 'existing');
    await mkdir(dir);
    await writeFile(join(dir, 'notes.txt'), 'keep me\n');
    const result = await runCli(['init', dir]);
    assert.ok(result.code === 1 || result.code === 2, `exit ${result.code}`);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^error: .*existing exists and is not empty; init only creates new repositories$/m);
    assert.deepEqual(await readdir(dir), ['notes.txt']);
    assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), 'keep me\n');
  });
});
