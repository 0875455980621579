/**
 * The chart as `helm push` stores it, pushed to a real registry (Debian's
 * docker-registry) and read back with skopeo, an independent client: Helm's
 * media types, the version as the tag, Chart.yaml as the config, and the
 * `helm package` tarball layout (every file under `<name>/`, .helmignore applied).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startRegistry, type Registry } from '../../test/support/oci-registry.js';
import { buildHelmChartArtifact, HELM_CHART_MEDIA_TYPE, HELM_CONFIG_MEDIA_TYPE } from './helm-chart-artifact.js';
import { publishHelmChart, readChartFiles } from './publish-helm-chart.js';

const CHART = fileURLToPath(new URL('../../charts/gitops-scaffolder', import.meta.url));
const CREATED = new Date('2026-12-01T00:00:00Z');

/** The names in a ustar archive (512-byte headers; pax headers skipped). */
function tarNames(tar: Buffer): string[] {
  const names: string[] = [];
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from: number, length: number): string =>
      header
        .subarray(from, from + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    if (type === '0' || type === '') names.push(prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

function skopeo(home: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('skopeo', ['--insecure-policy', ...args], {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, XDG_RUNTIME_DIR: home, NO_PROXY: '*', no_proxy: '*' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`skopeo ${args.join(' ')}: ${err}`))));
  });
}

describe('the Helm chart as an OCI artifact', () => {
  let dir: string;
  let registry: Registry;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'helm-chart-'));
    registry = await startRegistry(join(dir, 'registry'));
  });
  after(async () => {
    await registry?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('is packed like `helm package`: <name>/ prefix, Chart.yaml as the config, .helmignore applied, reproducible', async () => {
    const files = await readChartFiles(CHART);
    assert.ok(files.some((f) => f.path === 'templates/deployment.yaml'));
    const artifact = await buildHelmChartArtifact({ files, created: CREATED });
    const names = tarNames(gunzipSync(artifact.layer.content));
    assert.ok(names.length > 0 && names.every((n) => n.startsWith('gitops-scaffolder/')), names.join());
    for (const path of ['Chart.yaml', 'values.yaml', 'values.schema.json', 'templates/_helpers.tpl', 'templates/NOTES.txt'])
      assert.ok(names.includes(`gitops-scaffolder/${path}`), path);
    const config = JSON.parse(artifact.config.content.toString('utf8')) as Record<string, unknown>;
    assert.deepEqual([config['apiVersion'], config['name'], config['version'], config['appVersion']], ['v2', 'gitops-scaffolder', '0.1.0', '0.1.0']);
    assert.equal(artifact.tag, '0.1.0');
    const again = await buildHelmChartArtifact({ files, created: CREATED });
    assert.equal(again.digest, artifact.digest, 'the same chart and time give the same digest');
  });

  it("is pushed as <repository>/<name>:<version> with Helm's media types, readable by an independent client", async () => {
    const pushed = await publishHelmChart({ chartDir: CHART, to: `oci://${registry.host}/charts`, created: CREATED });
    assert.equal(pushed.repository, `${registry.host}/charts/gitops-scaffolder`);
    assert.equal(pushed.tag, '0.1.0');
    const raw = await skopeo(dir, 'inspect', '--tls-verify=false', '--raw', `docker://${registry.host}/charts/gitops-scaffolder:0.1.0`);
    assert.equal(`sha256:${createHash('sha256').update(raw).digest('hex')}`, pushed.digest);
    const manifest = JSON.parse(raw) as { config: { mediaType: string }; layers: { mediaType: string }[]; annotations: Record<string, string> };
    assert.equal(manifest.config.mediaType, HELM_CONFIG_MEDIA_TYPE);
    assert.deepEqual(
      manifest.layers.map((l) => l.mediaType),
      [HELM_CHART_MEDIA_TYPE],
    );
    assert.equal(manifest.annotations['org.opencontainers.image.title'], 'gitops-scaffolder');
    assert.equal(manifest.annotations['org.opencontainers.image.version'], '0.1.0');
    const config = JSON.parse(
      await skopeo(dir, 'inspect', '--tls-verify=false', '--config', '--raw', `docker://${registry.host}/charts/gitops-scaffolder:0.1.0`),
    ) as { name: string };
    assert.equal(config.name, 'gitops-scaffolder');
  });

  it('refuses a target with a tag, and a directory that is not a chart', async () => {
    await assert.rejects(publishHelmChart({ chartDir: CHART, to: `oci://${registry.host}/charts:latest` }), /without tag or digest/);
    await assert.rejects(publishHelmChart({ chartDir: join(CHART, 'templates'), to: `oci://${registry.host}/charts` }), /Chart\.yaml/);
  });
});
