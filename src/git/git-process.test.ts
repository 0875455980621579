import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationError, TimeoutError, UnavailableError, ValidationError, isAppError } from '../errors.js';
import { redactSecrets, runGit, toGitError } from './git-process.js';

/** `git -c alias.x='!cmd' x` runs cmd through the shell with git's own environment. */
const shell = (command: string) => ['-c', `alias.sh=!${command}`, 'sh'];

describe('redactSecrets', () => {
  it('removes URL user info, Authorization headers, token shapes, keys and given literals', () => {
    const text = [
      "fatal: unable to access 'https://alice:s3cr3t@git.example.net/repo.git/': 403",
      'https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/x',
      '> Authorization: Basic YWxpY2U6czNjcjN0',
      'header: Bearer abcdefghijklmnop',
      'token glpat-abcdefghijklmnopqrstu',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
      'my-literal-secret appears here',
    ].join('\n');
    const out = redactSecrets(text, ['my-literal-secret']);
    for (const leaked of ['s3cr3t', 'alice', 'YWxpY2U6czNjcjN0', 'abcdefghijklmnop', 'glpat-', 'ghp_', 'b3BlbnNzaC1rZXktdjEAAAAA', 'my-literal-secret']) {
      assert.ok(!out.includes(leaked), `${leaked} leaked in:\n${out}`);
    }
    assert.match(out, /https:\/\/\*\*\*@git\.example\.net\/repo\.git/);
    assert.match(out, /Authorization: \*\*\*/);
  });

  it('leaves ordinary text alone', () => {
    const text = "fatal: repository 'git://127.0.0.1:9418/r.git/' not found";
    assert.equal(redactSecrets(text), text);
  });
});

describe('runGit', () => {
  it('runs git in a clean environment: no user config, no prompts, C locale, nothing inherited but PATH and network settings', async () => {
    const home = await mkdtemp(join(tmpdir(), 'gs-git-home-'));
    const saved = { HOME: process.env['HOME'], GIT_CONFIG_GLOBAL: process.env['GIT_CONFIG_GLOBAL'], LEAK: process.env['GS_TEST_LEAK'] };
    try {
      await writeFile(join(home, '.gitconfig'), '[user]\n\tname = Leaky User\n[credential]\n\thelper = store\n');
      process.env['HOME'] = home;
      process.env['GIT_CONFIG_GLOBAL'] = join(home, '.gitconfig');
      process.env['GS_TEST_LEAK'] = 'inherited-value';
      const config = await runGit(['config', '--get', 'user.name'], { cwd: home, okExitCodes: [0, 1] });
      assert.equal(config.exitCode, 1, `user config was read: ${config.stdout}`);
      const env = (await runGit(shell('env'), { cwd: home, env: { EXTRA: 'given' } })).stdout;
      assert.match(env, /^GIT_TERMINAL_PROMPT=0$/m);
      assert.match(env, /^GIT_CONFIG_NOSYSTEM=1$/m);
      assert.match(env, /^HOME=\/dev\/null$/m);
      assert.match(env, /^LC_ALL=C$/m);
      assert.match(env, /^EXTRA=given$/m);
      assert.ok(!env.includes('inherited-value'));
      assert.ok(!env.includes(home));
    } finally {
      for (const [key, name] of [
        ['HOME', 'HOME'],
        ['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_GLOBAL'],
        ['LEAK', 'GS_TEST_LEAK'],
      ] as const) {
        const value = saved[key];
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await rm(home, { recursive: true, force: true });
    }
  });

  it('feeds input on stdin and returns output', async () => {
    const result = await runGit(['hash-object', '--stdin'], { cwd: tmpdir(), input: 'hello\n' });
    assert.equal(result.stdout.trim(), 'ce013625030ba8dba906f756967f9e9ca394464a');
    assert.equal(result.exitCode, 0);
  });

  it('returns expected non-zero exits and throws on others, naming only the subcommand', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gs-git-proc-'));
    try {
      await runGit(['init', '--quiet', dir], { cwd: dir });
      const quiet = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: dir, okExitCodes: [0, 1] });
      assert.equal(quiet.exitCode, 1);
      await assert.rejects(runGit(['rev-parse', '--verify', 'no-such-ref'], { cwd: dir }), (error: unknown) => {
        assert.ok(isAppError(error));
        assert.match(error.message, /^git rev-parse failed \(exit 128\)/);
        return true;
      });
      await assert.rejects(runGit(['rev-parse', '--bogus-option-x'], { cwd: dir, okExitCodes: [] }), (error: unknown) => isAppError(error));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('redacts what git prints about a remote, and classifies it', async () => {
    await assert.rejects(
      runGit(['ls-remote', 'http://alice:hunter2-secret@127.0.0.1:1/repo.git'], { cwd: tmpdir(), secrets: ['hunter2-secret'] }),
      (error: unknown) => {
        assert.ok(error instanceof UnavailableError, String(error));
        assert.ok(!error.message.includes('hunter2'), error.message);
        assert.ok(!error.message.includes('alice'), error.message);
        return true;
      },
    );
  });

  it('maps refused credentials and bad pathspecs to their error classes', () => {
    const auth = toGitError(['clone'], { exitCode: 128, stdout: '', stderr: "fatal: Authentication failed for 'https://x/'\n" });
    assert.ok(auth instanceof AuthenticationError);
    const path = toGitError(['add'], { exitCode: 128, stdout: '', stderr: "fatal: pathspec 'nope' did not match any files\n" });
    assert.ok(path instanceof ValidationError);
    const hint = toGitError(['push'], { exitCode: 1, stdout: '', stderr: 'error: failed to push\nhint: do this\nhint: and that\n' });
    assert.ok(!hint.message.includes('hint'));
  });

  it('kills git when the timeout passes', async () => {
    const started = Date.now();
    await assert.rejects(runGit(shell('sleep 5'), { cwd: tmpdir(), timeoutMs: 100 }), TimeoutError);
    assert.ok(Date.now() - started < 4000, 'did not wait for sleep 5');
  });

  it('kills git when the signal aborts, rejecting with its reason', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(runGit(shell('sleep 5'), { cwd: tmpdir(), signal: controller.signal }), { name: 'AbortError' });
    const aborted = AbortSignal.abort(new Error('stop now'));
    await assert.rejects(runGit(['version'], { cwd: tmpdir(), signal: aborted }), /stop now/);
  });

  it('reports a missing working directory as such', async () => {
    await assert.rejects(runGit(['version'], { cwd: join(tmpdir(), 'gs-does-not-exist-4711') }), /working directory/);
  });
});
