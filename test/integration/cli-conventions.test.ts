/**
 * The command-line conventions kubectl and flux users expect, on every binary,
 * as a user meets them: real child processes, real Git work trees. --version,
 * -o json|yaml, completion scripts the shells accept, render --dry-run writing
 * nothing, and an exit code of 2 (never the transient 75) for each permanent
 * error, with the flag the user typed named in the message.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { PACKAGE_ROOT, assertExit, runCli } from '../support/cli.js';

const CLUSTER_ARGS = ['--cluster', 'eu-prod-1', '--domain', 'eu-prod-1.example.net', '--region', 'eu-west-1'];
const controller = createTestCertificate();
const SECRET = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-key\n  namespace: tcr\nstringData:\n  key: not-printed-anywhere\n';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: tmpdir(), LC_ALL: 'C' },
  });
}

describe('CLI conventions', () => {
  let tmp: string;
  let repo: string;
  let cert: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'cli-conventions-'));
    repo = join(tmp, 'gitops');
    cert = join(tmp, 'cert.pem');
    await writeFile(cert, controller.certificatePem);
    assertExit(await runCli(['init', repo]), 0);
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('prints the package version with --version on every binary', async () => {
    const { version } = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const binary of ['cli', 'runner-cli', 'main'] as const) {
      const result = await runCli(['--version'], { binary });
      assertExit(result, 0);
      assert.equal(result.stdout, `${version}\n`, binary);
    }
  });

  it('reports a mistyped flag as unknown, with the flag it was meant to be, before any missing required flag; one line of usage, exit 2', async () => {
    const typo = await runCli(['render', '--repo', repo, '--cluster', 'eu-prod-1', '--domian', 'eu-prod-1.example.net', '--region', 'eu-west-1']);
    assertExit(typo, 2);
    assert.match(typo.stderr, /^error: unknown option '--domian'\n\(Did you mean --domain\?\)\n\(run 'generate-gitops-env render --help' for usage\)\n$/);
    const missing = await runCli(['render', '--repo', repo]);
    assertExit(missing, 2);
    assert.match(missing.stderr, /required option '--cluster <name>' not specified/);
    assert.doesNotMatch(missing.stderr, /Usage:/, 'a hint, not the whole help');
    // A value given with an unknown flag is never echoed: it may be a credential.
    const secret = await runCli(['seal', '--tokn=s3cret-value']);
    assertExit(secret, 2);
    assert.ok(!secret.stderr.includes('s3cret-value'));
    const serve = await runCli(['serve', '--prot', '9000'], { binary: 'main' });
    assertExit(serve, 2);
    assert.match(serve.stderr, /unknown option '--prot'\n\(Did you mean --port\?\)/);
  });

  it('exits 2 for a cluster the repository does not have, in verify as in remove', async () => {
    for (const command of ['verify', 'remove']) {
      const result = await runCli([command, '--repo', repo, '--cluster', 'nope']);
      assertExit(result, 2);
      assert.match(result.stderr, /clusters\/nope does not exist in the repository/, command);
    }
  });

  it('has a version subcommand beside --version', async () => {
    const { version } = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const binary of ['cli', 'main'] as const) {
      const result = await runCli(['version'], { binary });
      assertExit(result, 0);
      assert.equal(result.stdout, `${version}\n`, binary);
    }
  });

  it('serve: --port, --host and --data-dir win over PORT, HOST and DATA_DIR; a generated token is not printed to a stderr that is not a terminal', async () => {
    const dataDir = join(tmp, 'serve-data');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(PACKAGE_ROOT, 'src', 'main.ts'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      {
        cwd: PACKAGE_ROOT,
        // Each variable alone would refuse to start (PORT) or listen elsewhere: only the flags make this work.
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          NO_COLOR: '1',
          LOG_LEVEL: 'silent',
          PORT: 'not-a-port',
          HOST: '192.0.2.1',
          DATA_DIR: join(tmp, 'env-data'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let stderr = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          if (/API token.*\n/.test(stderr)) resolve();
        });
        void exited.then((code) => reject(new Error(`serve exited ${code} before its notice:\n${stderr}`)));
      });
      const address = /dashboard at (http:\/\/127\.0\.0\.1:\d+)\/ui\//.exec(stderr)?.[1];
      assert.ok(address, stderr);
      const token = (await readFile(join(dataDir, 'api-token'), 'utf8')).trim();
      assert.ok(!stderr.includes(token), 'the generated token went to a stderr that is not a terminal');
      assert.match(stderr, new RegExp(`sign in with the one in ${join(dataDir, 'api-token').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const listed = await fetch(`${address}/api/v1/scaffolds`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(listed.status, 200, 'the token in the named file signs in');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
  });

  it('marks required flags in help', async () => {
    const help = await runCli(['render', '--help']);
    assertExit(help, 0);
    assert.match(help.stdout, /--repo <dir> +work tree of the platform repository \(required\)/);
    assert.match(help.stdout, /--cluster <name> .*\(required\)/);
    assert.doesNotMatch(help.stdout, /--cert <pem-file> .*\(required\)/);
  });

  it('render --dry-run prints the diff and writes nothing', async () => {
    const head = git(repo, 'rev-parse', 'HEAD');
    const dry = await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--pass', 'infrastructure', '--dry-run']);
    assertExit(dry, 0);
    assert.match(dry.stdout, /^--- \/dev\/null\n\+\+\+ b\/clusters\/eu-prod-1\/flux\/cluster-config\.yaml\n@@ -0,0 \+1,\d+ @@\n/m);
    assert.match(dry.stdout, /^\+ {2}cluster_name: eu-prod-1$/m);
    assert.match(dry.stderr, /dry run, nothing written: \d+ added, 0 modified, 0 removed/);
    assert.ok(!dry.stdout.includes('\u001b['), 'colour on a pipe');
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'the dry run wrote files');
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head);

    // After a real render, a changed input shows as a modified line, and still nothing is written.
    assertExit(await runCli(['render', '--repo', repo, ...CLUSTER_ARGS, '--pass', 'infrastructure']), 0);
    git(repo, 'add', '--all');
    git(repo, 'commit', '--quiet', '-m', 'Add eu-prod-1');
    const changed = await runCli([
      'render',
      '--repo',
      repo,
      '--cluster',
      'eu-prod-1',
      '--domain',
      'eu-prod-1.example.org',
      '--region',
      'eu-west-1',
      '--pass',
      'infrastructure',
      '--dry-run',
    ]);
    assertExit(changed, 0);
    assert.match(changed.stdout, /^- {2}cluster_domain: eu-prod-1\.example\.net\n\+ {2}cluster_domain: eu-prod-1\.example\.org$/m);
    assert.match(changed.stderr, /\d+ modified/);
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'the dry run wrote files');
  });

  it('prints data with -o json and -o yaml: verify findings, graph, seal', async () => {
    const verify = await runCli(['verify', '--repo', repo, '--cluster', 'eu-prod-1', '-o', 'json']);
    assertExit(verify, 0);
    const report = JSON.parse(verify.stdout) as { ok: boolean; findings: string[]; kustomizationsChecked: number };
    assert.equal(report.ok, true);
    assert.deepEqual(report.findings, []);
    assert.ok(report.kustomizationsChecked >= 1);

    const graphJson = await runCli(['graph', '--repo', repo, '--cluster', 'eu-prod-1', '-o', 'json']);
    const graphYaml = await runCli(['graph', '--repo', repo, '--cluster', 'eu-prod-1', '--output', 'yaml']);
    assertExit(graphJson, 0);
    assertExit(graphYaml, 0);
    const graph = JSON.parse(graphJson.stdout) as { nodes: { name: string }[] };
    assert.deepEqual(parse(graphYaml.stdout), graph, 'yaml and json carry the same data');
    assert.ok(graph.nodes.some((node) => node.name === 'infrastructure'));
    const both = await runCli(['graph', '--repo', repo, '--cluster', 'eu-prod-1', '-o', 'json', '--format', 'dot']);
    assertExit(both, 2);
    assert.match(both.stderr, /^error: --output: /m);

    const sealed = await runCli(['seal', '--cert', cert, '-o', 'json'], { stdin: SECRET });
    assertExit(sealed, 0);
    const object = JSON.parse(sealed.stdout) as { kind: string; metadata: { name: string }; spec: { encryptedData: Record<string, string> } };
    assert.equal(object.kind, 'SealedSecret');
    assert.equal(object.metadata.name, 'api-key');
    assert.ok(object.spec.encryptedData.key);
    assert.ok(!sealed.stdout.includes('not-printed-anywhere'));
  });

  it('prints completion scripts for bash, zsh and fish that know every command and flag', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const result = await runCli(['completion', shell]);
      assertExit(result, 0);
      for (const word of ['render', 'verify', 'graph', 'seal', 'dry-run', 'infrastructure'])
        assert.ok(result.stdout.includes(word), `${shell} script lacks ${word}`);
      const checker = spawnSync(shell, [shell === 'fish' ? '--no-execute' : '-n'], { input: result.stdout, encoding: 'utf8' });
      if (checker.error === undefined) assert.equal(checker.status, 0, `${shell} refuses its script: ${checker.stderr}`);
    }
    const bash = (await runCli(['completion', 'bash'])).stdout;
    assert.match(bash, /^complete -o filenames -F _generate_gitops_env generate-gitops-env$/m);
    // What bash offers after "render --pass ".
    const offered = spawnSync(
      'bash',
      ['-c', `${bash}\nCOMP_WORDS=(generate-gitops-env render --pass ''); COMP_CWORD=3; _generate_gitops_env; echo "\${COMPREPLY[*]}"`],
      { encoding: 'utf8' },
    );
    assert.equal(offered.stdout.trim(), 'infrastructure all');
    const service = await runCli(['completion', 'bash'], { binary: 'main' });
    assertExit(service, 0);
    assert.match(service.stdout, /scaffold/);
    assertExit(await runCli(['completion', 'powershell']), 2);
  });

  it("offers the repository's cluster names after --cluster in bash, not file names: from the work tree it is run in, or the --repo on the line", async () => {
    const work = join(tmp, 'completion-repo');
    git(tmp, 'init', '--quiet', work);
    for (const cluster of ['eu-prod-1', 'eu-west-2', 'us-east-1']) await mkdir(join(work, 'clusters', cluster, 'flux'), { recursive: true });
    await writeFile(join(work, 'clusters', 'README.md'), 'not a cluster\n');
    // A file in the shell's directory that starts like the clusters: a file name must not be offered.
    await writeFile(join(work, 'clusters', 'eu-prod-1', 'flux', 'eu-notes.yaml'), '');
    const script = (await runCli(['completion', 'bash'])).stdout;
    const offered = (cwd: string, words: readonly string[]) => {
      const line = words.map((w) => `'${w}'`).join(' ');
      const result = spawnSync(
        'bash',
        ['-c', `${script}\nCOMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _generate_gitops_env; printf '%s\\n' "\${COMPREPLY[@]}"`],
        { cwd, encoding: 'utf8' },
      );
      assert.equal(result.status, 0, result.stderr);
      return result.stdout.split('\n').filter((w) => w !== '');
    };
    // In a subdirectory of the work tree: its top level's clusters/.
    const inside = join(work, 'clusters', 'eu-prod-1', 'flux');
    assert.deepEqual(offered(inside, ['generate-gitops-env', 'remove', '--cluster', 'e']), ['eu-prod-1', 'eu-west-2']);
    assert.deepEqual(offered(inside, ['generate-gitops-env', 'upgrade', '--cluster', 'eu-w']), ['eu-west-2']);
    assert.deepEqual(offered(inside, ['generate-gitops-env', 'clusters', '--cluster', '']), ['eu-prod-1', 'eu-west-2', 'us-east-1']);
    // Outside any repository, the --repo typed earlier on the line says where to look.
    assert.deepEqual(offered(tmpdir(), ['generate-gitops-env', 'remove', '--repo', work, '--cluster', 'e']), ['eu-prod-1', 'eu-west-2']);
    // Other free values still complete file names.
    assert.deepEqual(offered(join(work, 'clusters'), ['generate-gitops-env', 'remove', '--repo', 'REA']), ['README.md']);
    const zsh = (await runCli(['completion', 'zsh'])).stdout;
    assert.match(zsh, /'--cluster'\[[^\]]*\]:cluster:_generate_gitops_env_clusters'/);
    const fish = (await runCli(['completion', 'fish'])).stdout;
    assert.match(fish, /-n '__fish_seen_subcommand_from remove' -l cluster -x -a '\(__generate_gitops_env_clusters\)'/);
  });

  describe('each permanent error exits 2 (or 1) and never 75, naming the flag typed', () => {
    const cases: {
      title: string;
      args: () => string[];
      code: number;
      error: RegExp;
      stdin?: string;
      binary?: 'runner-cli' | 'main';
      env?: Record<string, string>;
    }[] = [
      { title: 'an unknown flag', args: () => ['render', '--repo', repo, ...CLUSTER_ARGS, '--bogus'], code: 2, error: /unknown option '--bogus'/ },
      { title: 'a missing required flag', args: () => ['render', '--repo', repo], code: 2, error: /required option '--cluster <name>' not specified/ },
      {
        title: 'a value outside the choices',
        args: () => ['verify', '--repo', repo, '-o', 'xml'],
        code: 2,
        error: /'-o, --output <format>' argument 'xml' is invalid/,
      },
      {
        title: 'a --repo that does not exist',
        args: () => ['render', '--repo', join(tmp, 'nowhere'), ...CLUSTER_ARGS, '--pass', 'infrastructure'],
        code: 2,
        error: /^error: --repo: .*nowhere does not exist$/m,
      },
      { title: 'verify on a --repo that does not exist', args: () => ['verify', '--repo', join(tmp, 'nowhere')], code: 2, error: /^error: --repo: /m },
      {
        title: 'a bad cluster name',
        args: () => ['render', '--repo', repo, '--cluster', 'Bad_Name', '--domain', 'x.example.net', '--region', 'eu-west-1', '--pass', 'infrastructure'],
        code: 2,
        error: /^error: --cluster: must be a DNS-1123 label/,
      },
      // Checked before the progress line (the pattern is anchored at the first line), so no render seems to have started.
      {
        title: 'a bad domain, before any progress line',
        args: () => ['render', '--repo', repo, '--cluster', 'ok-1', '--domain', 'bad_domain', '--region', 'eu-west-1', '--pass', 'infrastructure'],
        code: 2,
        error: /^error: --domain: /,
      },
      {
        title: 'remove on a --repo that does not exist',
        args: () => ['remove', '--repo', join(tmp, 'nowhere'), '--cluster', 'eu-prod-1'],
        code: 2,
        error: /^error: --repo: .*nowhere does not exist$/m,
      },
      {
        title: 'clusters on a --repo that does not exist',
        args: () => ['clusters', '--repo', join(tmp, 'nowhere')],
        code: 2,
        error: /^error: --repo: .*nowhere does not exist$/m,
      },
      {
        title: 'upgrade on a --repo that does not exist',
        args: () => ['upgrade', '--repo', join(tmp, 'nowhere')],
        code: 2,
        error: /^error: --repo: .*nowhere does not exist$/m,
      },
      {
        title: 'a missing certificate file',
        args: () => ['seal', '--cert', join(tmp, 'missing.pem')],
        code: 2,
        error: /^error: --cert: cannot read/m,
        stdin: SECRET,
      },
      {
        title: 'stdin that is not a Secret',
        args: () => ['seal', '--cert', cert],
        code: 2,
        error: /^error: kind: must be Secret/m,
        stdin: 'kind: ConfigMap\napiVersion: v1\n',
      },
      { title: 'a graph of a cluster that has none', args: () => ['graph', '--repo', repo, '--cluster', 'nowhere-1'], code: 2, error: /^error: / },
      {
        title: 'init into a directory that is not empty (a conflict, not bad input)',
        args: () => ['init', repo],
        code: 1,
        error: /^error: .* exists and is not empty/m,
      },
      {
        title: 'git not installed (permanent for this host, not transient)',
        args: () => ['init', join(tmp, 'no-git')],
        code: 1,
        error: /^error: git is not installed/m,
        env: { PATH: '/nonexistent' },
      },
      { title: 'the runner without its required flags', args: () => [], code: 2, error: /required option/, binary: 'runner-cli' },
      {
        title: 'the runner with a mistyped flag, reported before its missing required flags',
        args: () => ['--domian', 'x.example.net'],
        code: 2,
        error: /^error: unknown option '--domian'\n\(Did you mean --domain\?\)\n/,
        binary: 'runner-cli',
      },
      {
        title: 'scaffold with a bad cluster name',
        args: () => ['scaffold', '--cluster', 'Bad_Name', '--domain', 'x.example.net', '--region', 'eu-west-1', '--data-dir', join(tmp, 'embedded')],
        code: 2,
        error: /^scaffold failed: --cluster: must be a DNS-1123 label/m,
        binary: 'main',
      },
      { title: 'the service with an unknown flag', args: () => ['--bogus'], code: 2, error: /unknown option '--bogus'/, binary: 'main' },
    ];
    for (const { title, args, code, error, stdin, binary, env } of cases) {
      it(`${title}: exit ${code}`, async () => {
        const result = await runCli(args(), {
          ...(stdin === undefined ? {} : { stdin }),
          ...(binary === undefined ? {} : { binary }),
          env: { SCAFFOLD_RESULT_FILE: join(tmp, 'result.json'), ...env },
        });
        assertExit(result, code);
        assert.match(result.stderr, error);
        assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace is not a clear error');
      });
    }
  });
});
