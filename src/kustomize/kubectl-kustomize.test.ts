import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { MissingDependencyError, TimeoutError, ValidationError } from '../errors.js';
import { KubectlKustomize } from './kubectl-kustomize.js';

// Against the real kubectl (1.35, kustomize v5.7.1 inside): `npm test` puts the dev dependency's first on PATH.
describe('KubectlKustomize', () => {
  let root: string;
  const kustomize = new KubectlKustomize();

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'kubectl-kustomize-'));
    const write = async (path: string, text: string) => {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), text);
    };
    await write('base/kustomization.yaml', 'resources:\n  - cm.yaml\n');
    await write('base/cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  host: web.${cluster_domain}\n');
    await write('overlay/kustomization.yaml', 'namespace: tcr\nresources:\n  - ../base\n  - sa.yaml\n');
    await write('overlay/sa.yaml', 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: web\n');
    await write('broken/kustomization.yaml', 'resources:\n  - missing.yaml\n');
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('builds a directory relative to the repository root into multi-document YAML', async () => {
    const text = await kustomize.build(root, 'overlay');
    const objects = parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { namespace: string }; data?: unknown });
    assert.deepEqual(
      objects.map((o) => `${o.kind} ${o.metadata.namespace}`),
      ['ServiceAccount tcr', 'ConfigMap tcr'],
    );
    // Built text is left as kustomize wrote it: substitution is the core's business.
    assert.deepEqual(objects[1]!.data, { host: 'web.${cluster_domain}' });
  });

  it("throws ValidationError with kustomize's own message, paths relative to the repository", async () => {
    const error = await kustomize.build(root, 'broken').then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ValidationError);
    assert.match(error.message, /missing\.yaml/);
    assert.ok(!error.message.includes(root), error.message);
    assert.doesNotMatch(error.message, /run\.go|command failed/, 'the klog wrapper is stripped');
  });

  it("keeps kustomize's message of several lines (a remote base git could not fetch) on one line", async () => {
    const fake = join(root, 'fake-kubectl');
    const stderr = [
      'E1203 00:51:45.413068   17546 run.go:72] "command failed" err=<',
      `\taccumulating resources: accumulation err='accumulating resources from 'github.com/example/deploy?ref=v1': failed to run '/usr/bin/git fetch --depth=1 https://github.com/example/deploy v1': fatal: unable to access 'https://github.com/example/deploy/': Could not resolve host: github.com`,
      `\t: exit status 128 in ${root}/overlay`,
      ' >',
    ].join('\n');
    await writeFile(fake, `#!/bin/sh\ncat >&2 <<'EOF'\n${stderr}\nEOF\nexit 1\n`, { mode: 0o755 });
    const error = await new KubectlKustomize({ kubectl: fake }).build(root, 'overlay').then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ValidationError);
    assert.equal(
      error.message,
      "accumulating resources: accumulation err='accumulating resources from 'github.com/example/deploy?ref=v1': failed to run '/usr/bin/git fetch --depth=1 https://github.com/example/deploy v1': fatal: unable to access 'https://github.com/example/deploy/': Could not resolve host: github.com : exit status 128 in overlay",
    );
  });

  it("runs kubectl with Go's collector set for a short process, unless the environment sets it", async () => {
    const fake = join(root, 'env-kubectl');
    await writeFile(fake, '#!/bin/sh\nprintf "gogc: \\"%s\\"\\nmemlimit: \\"%s\\"\\nprocs: \\"%s\\"\\n" "$GOGC" "$GOMEMLIMIT" "$GOMAXPROCS"\n', {
      mode: 0o755,
    });
    const env = async () => parseAllDocuments(await new KubectlKustomize({ kubectl: fake }).build(root, 'overlay'))[0]!.toJS();
    assert.deepEqual(await env(), { gogc: '800', memlimit: '384MiB', procs: '1' });
    const saved = process.env['GOGC'];
    process.env['GOGC'] = '100';
    try {
      assert.deepEqual(await env(), { gogc: '100', memlimit: '384MiB', procs: '1' }, "the operator's GOGC wins");
    } finally {
      if (saved === undefined) delete process.env['GOGC'];
      else process.env['GOGC'] = saved;
    }
  });

  it('reads a path such as github.com/x/y as a local directory, never as a remote', async () => {
    await assert.rejects(kustomize.build(root, 'github.com/fluxcd/flux2'), (e: unknown) => {
      assert.ok(e instanceof ValidationError);
      assert.match(e.message, /github\.com\/fluxcd\/flux2/);
      assert.match(e.message, /no such file or directory|not a valid directory/);
      return true;
    });
  });

  it('refuses a directory outside the repository before spawning anything', async () => {
    await assert.rejects(kustomize.build(root, '../etc'), ValidationError);
    await assert.rejects(kustomize.build(root, '/etc'), ValidationError);
  });

  it('names a missing kubectl clearly', async () => {
    const missing = new KubectlKustomize({ kubectl: join(root, 'no-such-kubectl') });
    await assert.rejects(missing.build(root, 'overlay'), (e: unknown) => {
      assert.ok(e instanceof MissingDependencyError);
      // Not transient: no retry installs kubectl (a CLI exits 1, not 75).
      assert.equal(e.transient, false);
      assert.match(e.message, /kubectl not found/);
      return true;
    });
  });

  it('kills a build that exceeds its timeout', async () => {
    await assert.rejects(new KubectlKustomize({ timeoutMs: 1 }).build(root, 'overlay'), TimeoutError);
  });

  it('stops on an aborted signal', async () => {
    const controller = new AbortController();
    const pending = kustomize.build(root, 'overlay', controller.signal);
    controller.abort(new Error('stop'));
    await assert.rejects(pending, /stop/);
    await assert.rejects(kustomize.build(root, 'overlay', AbortSignal.abort(new Error('early'))), /early/);
  });
});
