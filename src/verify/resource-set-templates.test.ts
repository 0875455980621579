import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { planPreviews } from '../gitops/preview-environments.js';
import { previewsSpecSchema } from '../gitops/previews-schema.js';
import { memoryRepoReader } from '../gitops/repo-reader.js';
import type { AppliedKustomization } from './applied-object.js';
import { formatFinding } from './finding.js';
import { checkResourceSetTemplates } from './resource-set-templates.js';
import { analyzeSubstitution } from './substitution.js';

type Obj = Record<string, unknown> & { kind: string; spec?: Record<string, unknown> };

/** The generated previews layer, built and substituted by Flux (cluster-config defines cluster_domain), as verify applies it. */
async function appliedPreviews(edit: (objects: Obj[]) => void = () => {}): Promise<AppliedKustomization[]> {
  const planned = await planPreviews({
    spec: previewsSpecSchema.parse({ enabled: true, forge: 'gitlab', url: 'https://git.example.net/acme/platform.git' }),
    reader: memoryRepoReader(new Map([['base/apps/kustomization.yaml', 'resources: []\n']])),
    clusterName: 'eu-prod-1',
    fluxInstance: {
      yaml: '',
      syncKind: 'GitRepository',
      sync: { url: 'ssh://git@git.example.net/acme/platform.git', kind: 'GitRepository', pullSecret: 'flux-system' },
    },
    bootstrapLayer: undefined,
  });
  const objects = planned.files
    .filter(([rel]) => !rel.endsWith('kustomization.yaml'))
    .flatMap(([, text]) => parseAllDocuments(text).map((d) => d.toJS() as Obj));
  edit(objects);
  const kustomization = {
    kind: 'Kustomization',
    metadata: { name: 'previews', namespace: 'flux-system' },
    spec: { postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'cluster-config' }] } },
  };
  const substitution = analyzeSubstitution({ kustomization, objects, configMap: () => ({ cluster_domain: 'eu-prod-1.example.net' }) });
  assert.deepEqual(substitution.issues, []);
  return [
    {
      key: 'flux-system/previews',
      file: 'clusters/eu-prod-1/flux/previews.yaml',
      dir: 'clusters/eu-prod-1/previews',
      object: kustomization,
      dependsOn: [],
      objects: objects.map((o) => substitution.apply(o) as Obj),
    },
  ];
}

const resourceSetOf = (objects: Obj[]) => objects.find((o) => o.kind === 'ResourceSet')!;
const resources = (objects: Obj[]) => resourceSetOf(objects).spec!.resources as Obj[];

describe("the Flux Operator's << inputs.* >> after Flux's ${var}", () => {
  it("renders the generated ResourceSet per request once Flux substituted it: the request's id and commit, the cluster's domain", async () => {
    const report = checkResourceSetTemplates(await appliedPreviews());
    assert.deepEqual([report.findings, report.notes], [[], []]);
    const byKind = new Map(report.rendered.map((r) => [r.object.kind, r.object as Obj & { metadata: Record<string, unknown> }]));
    assert.deepEqual([...byKind.keys()], ['Namespace', 'GitRepository', 'Kustomization']);
    assert.equal(byKind.get('Namespace')!.metadata.name, 'preview-pr-42');
    assert.deepEqual(byKind.get('Namespace')!.metadata.labels, { 'gitops-scaffolder.io/preview': '42' });
    assert.match(String((byKind.get('GitRepository')!.spec!.ref as Record<string, unknown>).commit), /^[0-9a-f]{40}$/);
    const substitute = (byKind.get('Kustomization')!.spec!.postBuild as { substitute: Record<string, unknown> }).substitute;
    // Flux's layer first (${cluster_domain}), then the operator's (<< inputs.id >>), and the id stays a string.
    assert.deepEqual(substitute, { preview_id: '42', preview_namespace: 'preview-pr-42', preview_domain: 'pr-42.eu-prod-1.example.net' });
  });

  it('flags an input the GitLab merge request provider does not export', async () => {
    const applied = await appliedPreviews((objects) => {
      (resources(objects)[0]!.metadata as Record<string, unknown>).name = 'preview-mr-<< inputs.number >>';
    });
    assert.deepEqual(checkResourceSetTemplates(applied).findings.map(formatFinding), [
      'clusters/eu-prod-1/previews: ResourceSet flux-system/previews: << inputs.number >> names an input its input sets do not have (ResourceSetInputProvider flux-system/preview-requests (GitLabMergeRequest) export author, branch, id, sha, title): the operator fails to render it',
    ]);
  });

  it('flags an action left open, and hands back the unquoted number for schema validation', async () => {
    const open = await appliedPreviews((objects) => {
      (resources(objects)[0]!.metadata as Record<string, unknown>).name = 'preview-pr-<< inputs.id';
    });
    assert.match(
      checkResourceSetTemplates(open).findings.map(formatFinding).join('\n'),
      /"preview-pr-<< inputs.id" opens a << … >> template action it does not close/,
    );
    const unquoted = await appliedPreviews((objects) => {
      (resources(objects)[0]!.metadata as { labels: Record<string, string> }).labels['gitops-scaffolder.io/preview'] = '<< inputs.id >>';
    });
    const namespace = checkResourceSetTemplates(unquoted).rendered.find((r) => r.object.kind === 'Namespace')!.object as {
      metadata: { labels: Record<string, unknown> };
    };
    assert.equal(
      namespace.metadata.labels['gitops-scaffolder.io/preview'],
      42,
      'a request number renders as a YAML integer, which the Namespace schema refuses',
    );
  });
});
