/**
 * The service started as `serve` starts it with the Kubernetes executor (against
 * the API double) warns in its log when the runner image every Job runs can be
 * changed by moving a tag, and stays quiet when it is pinned by digest; a
 * private runner image gets the pull secrets configured for it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { startService } from '../../src/main.js';
import { createPino } from '../../src/pino-logger.js';
import { loadServiceConfig, type ServiceConfig } from '../../src/service/service-config.js';
import { createTestCertificate } from '../../src/sealing/test-certificate.js';
import { startKubeApiDouble, type KubeApiDouble } from '../support/kube-api-double.js';

const API_TOKEN = 'runner-image-pin-token-0123456789';
const DIGEST = `sha256:${'5e'.repeat(32)}`;

let kube: KubeApiDouble;
let scratch: string;
let savedKubeconfig: string | undefined;

before(async () => {
  kube = await startKubeApiDouble();
  scratch = await mkdtemp(join(tmpdir(), 'runner-image-pin-'));
  // Outside a pod the service reads the default kubeconfig: the double's.
  savedKubeconfig = process.env.KUBECONFIG;
  process.env.KUBECONFIG = await kube.writeKubeconfig(scratch);
});
after(async () => {
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  await kube?.stop();
  await rm(scratch, { recursive: true, force: true });
});

/** The configuration of a service on loopback with the Kubernetes executor, its state in `dir`. */
function kubernetesServiceConfig(dir: string, env: Record<string, string>): ServiceConfig {
  return loadServiceConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    API_TOKENS: API_TOKEN,
    AUTH_MODE: 'static',
    EXECUTOR: 'kubernetes',
    DATA_DIR: join(scratch, dir),
    ...env,
  });
}

/** Starts and stops the service with SCAFFOLD_RUNNER_IMAGE=image; returns its warnings about the runner image. */
async function startupWarnings(image: string, dir: string): Promise<{ msg: string; runnerImage?: string }[]> {
  const lines: string[] = [];
  const capture: DestinationStream = { write: (chunk: string) => void lines.push(...chunk.split('\n').filter(Boolean)) };
  const config = kubernetesServiceConfig(dir, { SCAFFOLD_RUNNER_IMAGE: image });
  const service = await startService(config, { logger: createPino({ level: 'info', destination: capture }), notice: () => undefined });
  await service.close();
  const entries = lines.map((line) => JSON.parse(line) as { level: string; msg: string; runnerImage?: string });
  assert.ok(
    entries.some((e) => e.msg === 'gitops-scaffolder listening'),
    'the service started',
  );
  return entries.filter((e) => e.level === 'warn' && /runner image/.test(e.msg));
}

describe('the runner image at start-up', { timeout: 240_000 }, () => {
  it('warns, naming the image and how to pin it, when it is pinned by tag only', async () => {
    const image = 'ghcr.io/kubeopera/scaffold-runner:0.1.0';
    const warnings = await startupWarnings(image, 'by-tag');
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]?.runnerImage, image);
    assert.match(warnings[0]?.msg ?? '', /not pinned by digest.*@sha256:/);
  });

  it('says nothing when it is pinned by digest', async () => {
    assert.deepEqual(await startupWarnings(`ghcr.io/kubeopera/scaffold-runner:0.1.0@${DIGEST}`, 'by-digest'), []);
  });

  it("gives every run's Job the pull secrets of SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS, so a private runner image can be pulled", async () => {
    const config = kubernetesServiceConfig('pull-secrets', {
      SCAFFOLD_RUNNER_IMAGE: `registry.example.net/private/scaffold-runner:0.1.0@${DIGEST}`,
      SCAFFOLD_RUNNER_IMAGE_PULL_SECRETS: 'runner-registry,mirror-pull',
      // A closed loopback port: nothing here reaches beyond this machine.
      DEFAULT_GITOPS_REPO_URL: 'https://127.0.0.1:9/platform/gitops.git',
    });
    const service = await startService(config, { logger: createPino({ level: 'silent' }), notice: () => undefined });
    try {
      const response = await service.app.inject({
        method: 'POST',
        url: '/api/v1/scaffolds',
        headers: { authorization: `Bearer ${API_TOKEN}` },
        payload: {
          cluster: { name: 'pulls-1', domain: 'pulls-1.example.net', region: 'eu-west-1' },
          sealing: { certificate: createTestCertificate().certificatePem },
        },
      });
      assert.equal(response.statusCode, 202, response.body);
      const { id } = response.json<{ id: string }>();
      const job = kube.getObject('jobs', config.jobNamespace, `scaffold-${id}`) as { spec: { template: { spec: { imagePullSecrets?: unknown } } } } | undefined;
      assert.ok(job, "the run's Job was created");
      assert.deepEqual(job.spec.template.spec.imagePullSecrets, [{ name: 'runner-registry' }, { name: 'mirror-pull' }]);
    } finally {
      await service.close();
    }
  });
});
