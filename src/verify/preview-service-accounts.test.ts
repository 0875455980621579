import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { planPreviews } from '../gitops/preview-environments.js';
import { previewsSpecSchema } from '../gitops/previews-schema.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import type { AppliedKustomization } from './applied-object.js';
import { formatFinding } from './finding.js';
import { checkPreviewServiceAccounts } from './preview-service-accounts.js';

type Obj = Record<string, unknown> & { kind: string; rules?: Record<string, unknown>[]; spec?: Record<string, unknown> };

/** The previews layer exactly as the generator writes it, as verify sees it applied. */
async function previewsLayer(): Promise<{ objects: Obj[]; applied: (objects: Obj[]) => AppliedKustomization[] }> {
  const planned = await planPreviews({
    spec: previewsSpecSchema.parse({ enabled: true }),
    reader: memoryRepoReader(new Map([['base/apps/kustomization.yaml', 'resources: []\n']])),
    clusterName: 'eu-prod-1',
    fluxInstance: { yaml: '', syncKind: 'GitRepository', sync: { url: 'https://github.com/acme/platform.git', kind: 'GitRepository' } },
    bootstrapLayer: 'infrastructure',
  });
  const objects = planned.files
    .filter(([rel]) => !rel.endsWith('kustomization.yaml'))
    .flatMap(([, text]) => parseAllDocuments(text).map((d) => d.toJS() as Obj))
    .filter((o) => o !== null);
  const applied = (objs: Obj[]): AppliedKustomization[] => [
    {
      key: 'flux-system/previews',
      file: 'clusters/eu-prod-1/flux/previews.yaml',
      dir: 'clusters/eu-prod-1/previews',
      object: { kind: 'Kustomization', metadata: { name: 'previews', namespace: 'flux-system' }, spec: {} },
      dependsOn: [],
      objects: objs,
    },
  ];
  return { objects, applied };
}

const clone = <T>(value: T): T => structuredClone(value);
const lines = (applied: AppliedKustomization[]) => checkPreviewServiceAccounts(applied).map(formatFinding);

describe('least privilege for preview ServiceAccounts', () => {
  it('passes the generated previews layer: its ClusterRole grants exactly namespaces, gitrepositories and kustomizations', async () => {
    const { objects, applied } = await previewsLayer();
    assert.deepEqual(lines(applied(objects)), []);
  });

  it('flags a role that also grants Secrets, or any verb, or every resource', async () => {
    const { objects, applied } = await previewsLayer();
    const widened = clone(objects);
    const role = widened.find((o) => o.kind === 'ClusterRole')!;
    role.rules!.push({ apiGroups: [''], resources: ['secrets'], verbs: ['get'] });
    role.rules!.push({ apiGroups: ['kustomize.toolkit.fluxcd.io'], resources: ['kustomizations'], verbs: ['*'] });
    role.rules!.push({ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterrolebindings'], verbs: ['escalate', 'bind'] });
    assert.deepEqual(lines(applied(widened)), [
      "clusters/eu-prod-1/previews: ResourceSet flux-system/previews: ServiceAccount flux-system/preview-deployer's ClusterRole gitops-scaffolder-preview-deployer grants secrets: a preview's role must grant exactly namespaces, gitrepositories.source.toolkit.fluxcd.io and kustomizations.kustomize.toolkit.fluxcd.io",
      'clusters/eu-prod-1/previews: ResourceSet flux-system/previews: ServiceAccount flux-system/preview-deployer\'s ClusterRole gitops-scaffolder-preview-deployer grants every verb (verbs: "*"): a preview\'s role must grant exactly namespaces, gitrepositories.source.toolkit.fluxcd.io and kustomizations.kustomize.toolkit.fluxcd.io',
      "clusters/eu-prod-1/previews: ResourceSet flux-system/previews: ServiceAccount flux-system/preview-deployer's ClusterRole gitops-scaffolder-preview-deployer grants clusterrolebindings.rbac.authorization.k8s.io: a preview's role must grant exactly namespaces, gitrepositories.source.toolkit.fluxcd.io and kustomizations.kustomize.toolkit.fluxcd.io",
      "clusters/eu-prod-1/previews: ResourceSet flux-system/previews: ServiceAccount flux-system/preview-deployer's ClusterRole gitops-scaffolder-preview-deployer grants verbs beyond applying and pruning (escalate, bind): a preview's role must grant exactly namespaces, gitrepositories.source.toolkit.fluxcd.io and kustomizations.kustomize.toolkit.fluxcd.io",
    ]);
    const star = clone(objects);
    star.find((o) => o.kind === 'ClusterRole')!.rules = [{ apiGroups: ['*'], resources: ['*'], verbs: ['get'] }];
    assert.match(lines(applied(star)).join('\n'), /grants every resource \(apiGroups: "\*"\)/);
  });

  it('flags a binding to a role the tree does not define (cluster-admin), and a ResourceSet without its own ServiceAccount', async () => {
    const { objects, applied } = await previewsLayer();
    const admin = clone(objects);
    (admin.find((o) => o.kind === 'ClusterRoleBinding')!.roleRef as Record<string, unknown>).name = 'cluster-admin';
    assert.deepEqual(lines(applied(admin)), [
      "clusters/eu-prod-1/previews: ResourceSet flux-system/previews: ServiceAccount flux-system/preview-deployer is bound by ClusterRoleBinding gitops-scaffolder-preview-deployer to ClusterRole cluster-admin, which the tree does not define: its grants cannot be checked (a preview's role must grant exactly namespaces, gitrepositories.source.toolkit.fluxcd.io and kustomizations.kustomize.toolkit.fluxcd.io)",
    ]);
    const operatorRights = clone(objects);
    delete operatorRights.find((o) => o.kind === 'ResourceSet')!.spec!.serviceAccountName;
    assert.match(
      lines(applied(operatorRights)).join('\n'),
      /without spec\.serviceAccountName, so the Flux Operator applies them with its own cluster-admin rights/,
    );
    const unbound = objects.filter((o) => o.kind !== 'ClusterRoleBinding');
    assert.match(lines(applied(unbound)).join('\n'), /is bound to no role/);
  });

  it('leaves ResourceSets that no pull/merge request feeds alone', async () => {
    const { objects, applied } = await previewsLayer();
    const branches = clone(objects);
    branches.find((o) => o.kind === 'ResourceSetInputProvider')!.spec!.type = 'GitHubBranch';
    branches.find((o) => o.kind === 'ClusterRole')!.rules = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
    assert.deepEqual(lines(applied(branches)), []);
  });
});
