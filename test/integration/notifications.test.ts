/**
 * Failures are messages (issue 25): a cluster rendered with a notification
 * Provider type and its webhook address gets a notification-controller
 * Provider and an Alert on every Kustomization and HelmRelease for `error`
 * events, in both shipped platforms. Read back the way the cluster would:
 * the objects validate against the real notification-controller CRDs
 * (../shared/crds), the cluster path builds with real kubectl kustomize, verify
 * passes, every HelmRelease the layers build is in a namespace the Alert
 * watches, and the address exists only as ciphertext of a strict-scoped
 * SealedSecret.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ValidationError } from '../../src/errors.js';
import { renderWorkTree } from '../../src/git/render-work-tree.js';
import { initPlatformRepository } from '../../src/git/seed-repository.js';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { platformDir } from '../../src/package-paths.js';
import { parseSealingCertificate } from '../../src/sealing/sealing-certificate.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { verifyWorkTree } from '../../src/workspace/verify-work-tree.js';
import { runCli } from '../support/cli.js';
import { crdValidator, objectsOf as objectsOfText } from '../support/shared-crds.js';

type Obj = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
};

const testCertificate = createTestCertificate();
const certificate = parseSealingCertificate(testCertificate.certificatePem);
const kustomize = new KubectlKustomize();
const validator = crdValidator();

/** A webhook URL is the credential itself: whoever has it posts into the channel. */
const SLACK_ADDRESS = 'https://hooks.slack.com/services/T0NOTIFY1/B0NOTIFY2/s3cr3tW3bh00kT0k3nXyZ';

const objectsOf = (text: string): Obj[] => objectsOfText<Obj>(text);

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && !e.parentPath.split('/').includes('.git')).map((e) => join(e.parentPath, e.name));
}

const PLATFORMS = [
  { platform: 'default', provider: 'slack', cluster: { name: 'staging', domain: 'staging.tantilium.example.com', region: 'eu-west-1' } },
  {
    platform: 'matrix-example',
    provider: 'msteams',
    cluster: { name: 'env-aws', domain: 'env-aws.mojaloop.example.net', region: 'eu-west-1', role: 'env', infra_provider: 'aws', dns_provider: 'route53' },
  },
  {
    platform: 'matrix-example',
    provider: 'generic',
    cluster: {
      name: 'tooling-proxmox',
      domain: 'tooling-proxmox.mojaloop.example.net',
      region: 'fra-dc2',
      role: 'tooling',
      infra_provider: 'proxmox',
      dns_provider: 'digitalocean',
    },
  },
] as const;

describe('failure notifications in the shipped platforms', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'notifications-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  for (const { platform, provider, cluster } of PLATFORMS) {
    describe(`${platform}, cluster ${cluster.name} with a ${provider} Provider`, () => {
      let repo: string;
      let alertsFile: string;
      let rootObjects: Obj[];
      const layerObjects: Obj[] = [];

      before(async () => {
        repo = join(tmp, `${platform}-${cluster.name}`);
        await initPlatformRepository(repo, platformDir(platform));
        const { result } = await renderWorkTree(repo, {
          cluster,
          pass: 'all',
          certificate,
          generatorVersion: '0.0.0-test',
          notificationProvider: provider,
          notificationAddress: `${SLACK_ADDRESS}\n`,
        });
        assert.deepEqual(result.notifications, { provider, name: 'flux-failures' });
        alertsFile = join(repo, result.gitopsPath, 'flux/flux-alerts.yaml');
        rootObjects = objectsOf(await kustomize.build(repo, result.gitopsPath));
        for (const layer of result.layers) layerObjects.push(...objectsOf(await kustomize.build(repo, layer.path)));
      });

      it('has one Provider of the chosen type and one Alert for error events, both valid against the notification-controller CRDs', async () => {
        const written = objectsOf(await readFile(alertsFile, 'utf8'));
        for (const object of written) assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] }, `${object.kind} against its CRD`);
        // What the cluster gets is what the root sync builds.
        const providers = rootObjects.filter((o) => o.kind === 'Provider' && o.apiVersion === 'notification.toolkit.fluxcd.io/v1beta3');
        const alerts = rootObjects.filter((o) => o.kind === 'Alert' && o.apiVersion === 'notification.toolkit.fluxcd.io/v1beta3');
        assert.equal(providers.length, 1);
        assert.equal(alerts.length, 1);
        const [p, a] = [providers[0]!, alerts[0]!];
        assert.equal(p.metadata?.namespace, 'flux-system');
        assert.equal(a.metadata?.namespace, 'flux-system');
        assert.equal(p.spec?.type, provider);
        assert.deepEqual(p.spec?.secretRef, { name: 'flux-notification-address' });
        assert.equal(p.spec?.address, undefined, 'the address is only in the sealed Secret');
        assert.deepEqual(a.spec?.providerRef, { name: p.metadata?.name });
        assert.equal(a.spec?.eventSeverity, 'error');
        const sources = a.spec?.eventSources as { kind: string; name: string; namespace?: string }[];
        assert.ok(
          sources.some((s) => s.kind === 'Kustomization' && s.name === '*' && s.namespace === undefined),
          'every Kustomization of flux-system',
        );
      });

      it('watches every HelmRelease and every Kustomization the layers build', () => {
        const alert = rootObjects.find((o) => o.kind === 'Alert')!;
        const sources = alert.spec?.eventSources as { kind: string; name: string; namespace?: string }[];
        const watched = (kind: string, namespace: string) =>
          sources.some((s) => s.kind === kind && s.name === '*' && (s.namespace ?? 'flux-system') === namespace);
        const releases = [...rootObjects, ...layerObjects].filter((o) => o.kind === 'HelmRelease');
        assert.ok(releases.length > 0);
        for (const release of releases)
          assert.ok(
            watched('HelmRelease', release.metadata?.namespace ?? 'flux-system'),
            `HelmRelease ${release.metadata?.namespace}/${release.metadata?.name} is watched`,
          );
        for (const k of rootObjects.filter((o) => o.kind === 'Kustomization' && String(o.apiVersion).startsWith('kustomize.toolkit'))) {
          assert.ok(watched('Kustomization', k.metadata?.namespace ?? 'flux-system'), `Kustomization ${k.metadata?.name} is watched`);
        }
      });

      it('seals the address, strict scope, into a layer after the Sealed Secrets controller, under the key notification-controller reads', () => {
        const sealed = layerObjects.filter((o) => o.kind === 'SealedSecret' && o.metadata?.name === 'flux-notification-address');
        assert.equal(sealed.length, 1);
        assert.equal(sealed[0]!.metadata?.namespace, 'flux-system');
        assert.deepEqual(Object.keys((sealed[0]!.spec as { encryptedData: Record<string, string> }).encryptedData), ['address']);
        assert.equal(rootObjects.filter((o) => o.kind === 'SealedSecret').length, 0, 'the root sync holds no SealedSecret');
        assert.equal(sealed[0]!.metadata?.annotations?.['sealedsecrets.bitnami.com/namespace-wide'], undefined);
        assert.equal(sealed[0]!.metadata?.annotations?.['sealedsecrets.bitnami.com/cluster-wide'], undefined);
      });

      it('never writes the address in plain text, nor base64 of it', async () => {
        const forms = [SLACK_ADDRESS, Buffer.from(SLACK_ADDRESS).toString('base64'), 's3cr3tW3bh00kT0k3nXyZ'];
        for (const file of await filesUnder(repo)) {
          const text = await readFile(file, 'utf8');
          for (const form of forms) assert.ok(!text.includes(form), `${file} holds the address`);
        }
      });

      it('passes verify with no finding', async () => {
        const report = await verifyWorkTree(repo, { cluster: cluster.name });
        assert.deepEqual(report.findings, []);
      });

      it('keeps the Provider type and the sealed address on a re-render that gives neither', async () => {
        const before = await readFile(alertsFile, 'utf8');
        const { result } = await renderWorkTree(repo, { cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
        assert.deepEqual(result.notifications, { provider, name: 'flux-failures' });
        assert.equal(await readFile(alertsFile, 'utf8'), before);
        assert.equal(result.credentials.find((c) => c.name === 'flux-notification-address')?.action, 'kept');
      });
    });
  }

  it('renders no Provider, no Alert and no sealed address for a cluster given none, and says so', async () => {
    const repo = join(tmp, 'default-quiet');
    await initPlatformRepository(repo, platformDir('default'));
    const { result } = await renderWorkTree(repo, { cluster: PLATFORMS[0].cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' });
    assert.equal(result.notifications, undefined);
    assert.equal(result.credentials.find((c) => c.name === 'flux-notification-address')?.action, 'omitted');
    assert.ok(![...result.tree.keys()].some((path) => path.endsWith('flux/flux-alerts.yaml') || path.includes('cert-manager-config/sealed')));
    const layer = parse(result.tree.get('clusters/staging/cert-manager-config/kustomization.yaml')!) as { resources: string[] };
    assert.ok(!layer.resources.includes('sealed'));
    assert.deepEqual((await verifyWorkTree(repo, { cluster: 'staging' })).findings, []);
  });

  it('refuses a Provider type the platform does not offer, an address that is not https, and a type without an address, never echoing the address', async () => {
    const repo = join(tmp, 'default-refused');
    await initPlatformRepository(repo, platformDir('default'));
    const render = (extra: { notificationProvider?: string; notificationAddress?: string }) =>
      renderWorkTree(repo, { cluster: PLATFORMS[0].cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test', ...extra });
    await assert.rejects(
      render({ notificationProvider: 'teams', notificationAddress: SLACK_ADDRESS }),
      (e: unknown) => e instanceof ValidationError && /"teams" is not a notification provider.*slack, msteams, generic/.test(e.message),
    );
    const plain = SLACK_ADDRESS.replace('https:', 'http:');
    await assert.rejects(
      render({ notificationProvider: 'slack', notificationAddress: plain }),
      (e: unknown) => e instanceof ValidationError && /must be an https:\/\/ URL/.test(e.message) && !e.message.includes('s3cr3t'),
    );
    await assert.rejects(
      render({ notificationProvider: 'slack' }),
      (e: unknown) => e instanceof ValidationError && /needs its webhook address/.test(e.message),
    );
  });

  it('refuses a render without an address when the platform requires notifications', async () => {
    const repo = join(tmp, 'default-required');
    await initPlatformRepository(repo, platformDir('default'));
    const descriptor = join(repo, 'scaffold.yaml');
    await writeFile(descriptor, (await readFile(descriptor, 'utf8')).replace(/^ {2}required: false$/m, '  required: true'));
    await assert.rejects(
      renderWorkTree(repo, { cluster: PLATFORMS[0].cluster, pass: 'all', certificate, generatorVersion: '0.0.0-test' }),
      (e: unknown) => e instanceof ValidationError && /requires failure notifications/.test(e.message),
    );
    // The first pass seals nothing, so it asks for nothing yet.
    await renderWorkTree(repo, { cluster: PLATFORMS[0].cluster, pass: 'infrastructure', generatorVersion: '0.0.0-test' });
  });

  it("verify fails a tree whose Alert names a Provider the root sync does not apply, or whose Provider's address Secret is not sealed", async () => {
    const repo = join(tmp, 'default-broken');
    await initPlatformRepository(repo, platformDir('default'));
    await renderWorkTree(repo, {
      cluster: PLATFORMS[0].cluster,
      pass: 'all',
      certificate,
      generatorVersion: '0.0.0-test',
      notificationProvider: 'slack',
      notificationAddress: SLACK_ADDRESS,
    });
    const file = join(repo, 'clusters/staging/flux/flux-alerts.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text
        .replace(/providerRef:\n {4}name: flux-failures/, 'providerRef:\n    name: flux-errors')
        .replace(/secretRef:\n {4}name: flux-notification-address/, 'secretRef:\n    name: slack-webhook'),
    );
    const findings = (await verifyWorkTree(repo, { cluster: 'staging' })).findings.map((f) => JSON.stringify(f));
    assert.equal(findings.length, 2, findings.join('\n'));
    assert.match(
      findings[0]!,
      /Alert flux-system\/flux-failures: spec.providerRef names Provider flux-system\/flux-errors, which nothing on this cluster applies/,
    );
    assert.match(findings[1]!, /Provider flux-system\/flux-failures: spec.secretRef names Secret flux-system\/slack-webhook/);
  });

  describe('generate-gitops-env render', () => {
    it('exits 2 naming the flag for an unknown Provider type or a non-https address, before any progress line, and never prints the address', async () => {
      const repo = join(tmp, 'cli');
      await initPlatformRepository(repo, platformDir('default'));
      const cert = join(tmp, 'cert.pem');
      await writeFile(cert, testCertificate.certificatePem);
      const addressFile = join(tmp, 'address');
      const base = ['render', '--repo', repo, '--cluster', 'staging', '--domain', 'staging.example.net', '--region', 'eu-west-1', '--cert', cert];

      const badType = await runCli([...base, '--notification-provider', 'teams']);
      assert.equal(badType.code, 2, badType.stderr);
      assert.match(badType.stderr, /--notification-provider: "teams" is not a notification provider this platform offers \(one of slack, msteams, generic\)/);
      assert.doesNotMatch(badType.stderr, /Rendering/);

      await writeFile(addressFile, SLACK_ADDRESS.replace('https:', 'http:'));
      const badAddress = await runCli([...base, '--notification-provider', 'slack', '--notification-address-file', addressFile]);
      assert.equal(badAddress.code, 2, badAddress.stderr);
      assert.match(badAddress.stderr, /--notification-address-file: must be an https:\/\/ URL/);
      assert.doesNotMatch(badAddress.stderr + badAddress.stdout, /s3cr3t/);

      await writeFile(addressFile, `${SLACK_ADDRESS}\n`);
      const ok = await runCli([...base, '--notification-provider', 'slack', '--notification-address-file', addressFile]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stderr, /failure notifications: slack Provider and Alert flux-failures/);
      assert.doesNotMatch(ok.stderr + ok.stdout, /s3cr3t/);
    });
  });
});
