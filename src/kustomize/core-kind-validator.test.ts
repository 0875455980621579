import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import { coreKindTable } from '../../scripts/core-kind-models.mjs';
import { CoreKindValidator, defaultCoreKindTable } from './core-kind-validator.js';

const validator = new CoreKindValidator();

const deployment = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'web', namespace: 'tcr' }) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata,
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'ghcr.io/example/web:1' }] } },
    ...spec,
  },
});

async function issuesOf(object: unknown): Promise<string[]> {
  const check = await validator.validate(object);
  assert.equal(check.status, 'checked');
  return check.status === 'checked' ? check.issues.map((i) => `${i.field}: ${i.message}`).sort() : [];
}

describe('CoreKindValidator', () => {
  it("ships the installed client-node's model metadata (after an upgrade: node scripts/core-kind-models.mjs)", async () => {
    const shipped: unknown = JSON.parse(await readFile(defaultCoreKindTable(), 'utf8'));
    assert.deepEqual(
      shipped,
      await coreKindTable(),
      'schemas/core-kinds.json is not what the installed client-node gives: run node scripts/core-kind-models.mjs',
    );
  });

  it('knows the model class of every kind it claims (guards against client-node renames)', async () => {
    for (const [apiVersion, kinds] of [
      ['v1', ['ConfigMap', 'Secret', 'Service', 'ServiceAccount', 'Namespace', 'PersistentVolumeClaim']],
      ['apps/v1', ['Deployment', 'StatefulSet', 'DaemonSet']],
      ['batch/v1', ['CronJob', 'Job']],
      ['networking.k8s.io/v1', ['Ingress', 'IngressClass', 'NetworkPolicy']],
      ['rbac.authorization.k8s.io/v1', ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']],
      ['storage.k8s.io/v1', ['StorageClass']],
      ['policy/v1', ['PodDisruptionBudget']],
      ['autoscaling/v2', ['HorizontalPodAutoscaler']],
    ] as const) {
      for (const kind of kinds) {
        const check = await validator.validate({ apiVersion, kind, metadata: { name: 'x' } });
        assert.deepEqual(check, { status: 'checked', issues: [] }, `${apiVersion} ${kind}`);
      }
    }
    assert.equal(typeof (k8s as unknown as Record<string, unknown>).V1Deployment, 'function');
  });

  it('accepts a realistic Deployment, including numeric quantities, named ports and nulls', async () => {
    const object = deployment({
      replicas: 2,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: 'web' }, creationTimestamp: null },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'ghcr.io/example/web:1',
              ports: [{ name: 'http', containerPort: 8080 }],
              resources: { requests: { cpu: 1, memory: '128Mi' }, limits: { memory: '256Mi' } },
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
              env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '1Gi' } }],
        },
      },
    });
    assert.deepEqual(await issuesOf(object), []);
  });

  it('reports unknown fields at any depth with their path and a suggestion', async () => {
    const object = deployment({ replica: 2 });
    (object.spec.template.spec.containers[0] as Record<string, unknown>).imagePullPolicyy = 'Always';
    assert.deepEqual(
      await issuesOf(object),
      [
        'spec.template.spec.containers[0].imagePullPolicyy: unknown field (did you mean imagePullPolicy?)',
        'spec.replica: unknown field (did you mean replicas?)',
      ].sort(),
    );
  });

  it('reports wrong primitive types: string for integer, number for string, bad quantity, bad int-or-string', async () => {
    assert.deepEqual(await issuesOf(deployment({ replicas: '2', paused: 'no', revisionHistoryLimit: 1.5 })), [
      'spec.paused: must be boolean (got string "no")',
      'spec.replicas: must be integer (got string "2")',
      'spec.revisionHistoryLimit: must be integer (got number 1.5)',
    ]);
    assert.deepEqual(
      await issuesOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { 'example.com/enabled': true } }, data: { port: 8080 } }),
      ['data.port: must be string (got number 8080)', 'metadata.annotations["example.com/enabled"]: must be string (got boolean true)'],
    );
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10GB' } } },
    };
    assert.deepEqual(await issuesOf(pvc), ['spec.resources.requests.storage: "10GB" is not a quantity (such as 500m, 1, 512Mi)']);
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: true }] } };
    assert.deepEqual(await issuesOf(service), ['spec.ports[0].targetPort: must be integer or string (got boolean true)']);
  });

  it('reports a missing metadata.name', async () => {
    assert.deepEqual(await issuesOf({ apiVersion: 'v1', kind: 'Namespace', metadata: {} }), ['metadata.name: required field is missing']);
    assert.deepEqual(await issuesOf({ apiVersion: 'v1', kind: 'Namespace' }), ['metadata.name: required field is missing']);
  });

  it('reports an API version that moved, and leaves unknown kinds unchecked', async () => {
    assert.deepEqual(await issuesOf({ apiVersion: 'extensions/v1beta1', kind: 'Ingress', metadata: { name: 'i' } }), [
      'apiVersion: extensions/v1beta1 Ingress is not served by current Kubernetes: use networking.k8s.io/v1',
    ]);
    assert.deepEqual(await issuesOf({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'p' } }), [
      'apiVersion: policy/v1beta1 PodDisruptionBudget is not served by current Kubernetes: use policy/v1',
    ]);
    assert.deepEqual(await validator.validate({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'm' } }), {
      status: 'unknown-kind',
    });
    assert.deepEqual(await validator.validate({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'm' } }), {
      status: 'unknown-kind',
    });
  });
});
