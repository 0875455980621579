/**
 * Least privilege for previews: a ResourceSet fed by pull/merge requests
 * renders objects from whatever the request's author wrote into the template's
 * inputs (the branch, the title, the commit), so the operator must apply them
 * as a ServiceAccount allowed exactly what a preview is made of: namespaces,
 * gitrepositories and kustomizations, with the verbs applying and pruning
 * them takes. Without `serviceAccountName` the operator applies as itself
 * (cluster-admin); a binding to a role the tree does not define (cluster-admin,
 * edit) cannot be checked and is refused too.
 */
import { PREVIEW_RESOURCES, PREVIEW_VERBS } from '../gitops/preview-environments.js';
import { isRecord } from '../model/is-record.js';
import { appliedNamespace, metadataOf, specOf, type AppliedKustomization } from './applied-object.js';
import type { Finding } from './finding.js';
import { isRequestProviderType } from './resource-set-templates.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io/';
const ALLOWED = new Set(PREVIEW_RESOURCES.map((r) => `${r.apiGroup}/${r.resource}`));
const ALLOWED_VERBS = new Set<string>(PREVIEW_VERBS);
const ALLOWED_TEXT = 'namespaces, gitrepositories.source.toolkit.fluxcd.io and kustomizations.kustomize.toolkit.fluxcd.io';

interface Placed {
  readonly object: Record<string, unknown>;
  readonly namespace: string | undefined;
  readonly dir: string;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The problems of one role's rules for a preview ServiceAccount. */
function ruleIssues(role: Record<string, unknown>): string[] {
  const issues: string[] = [];
  if (isRecord(role.aggregationRule)) issues.push('aggregates other ClusterRoles, whose grants are decided in the cluster');
  for (const rule of Array.isArray(role.rules) ? role.rules.filter(isRecord) : []) {
    if (strings(rule.nonResourceURLs).length > 0) issues.push(`grants nonResourceURLs ${strings(rule.nonResourceURLs).join(', ')}`);
    const groups = strings(rule.apiGroups);
    const resources = strings(rule.resources);
    const verbs = strings(rule.verbs);
    if (groups.includes('*') || resources.includes('*')) issues.push(`grants every resource (${groups.includes('*') ? 'apiGroups' : 'resources'}: "*")`);
    if (verbs.includes('*')) issues.push('grants every verb (verbs: "*")');
    for (const group of groups.filter((g) => g !== '*')) {
      for (const resource of resources.filter((r) => r !== '*')) {
        if (!ALLOWED.has(`${group}/${resource}`)) issues.push(`grants ${resource}${group === '' ? '' : `.${group}`}`);
      }
    }
    const extra = verbs.filter((v) => v !== '*' && !ALLOWED_VERBS.has(v));
    if (extra.length > 0) issues.push(`grants verbs beyond applying and pruning (${extra.join(', ')})`);
  }
  return issues;
}

/** Findings for every ResourceSet fed by pull/merge requests whose ServiceAccount may do more than a preview needs. */
export function checkPreviewServiceAccounts(kustomizations: readonly AppliedKustomization[]): Finding[] {
  const placed: Placed[] = kustomizations.flatMap((k) => k.objects.map((object) => ({ object, namespace: appliedNamespace(object, k.object), dir: k.dir })));
  const find = (kind: string, name: string, namespace?: string) =>
    placed.find((p) => p.object.kind === kind && metadataOf(p.object).name === name && (namespace === undefined || p.namespace === namespace));
  const findings: Finding[] = [];
  for (const { object, namespace, dir } of placed) {
    if (object.kind !== 'ResourceSet' || typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith('fluxcd.controlplane.io/')) continue;
    const ns = namespace ?? 'default';
    const spec = specOf(object);
    const fedByRequests = (Array.isArray(spec.inputsFrom) ? spec.inputsFrom.filter(isRecord) : []).some((ref) => {
      const provider = typeof ref.name === 'string' ? find('ResourceSetInputProvider', ref.name, ns) : undefined;
      return provider !== undefined && isRequestProviderType(specOf(provider.object).type);
    });
    if (!fedByRequests) continue;
    const owner = `ResourceSet ${ns}/${String(metadataOf(object).name ?? '')}`;
    const at = (message: string) => findings.push({ file: dir, object: owner, message });
    const account = spec.serviceAccountName;
    if (typeof account !== 'string' || account === '') {
      at(
        `renders previews from pull/merge requests without spec.serviceAccountName, so the Flux Operator applies them with its own cluster-admin rights: name a ServiceAccount allowed only ${ALLOWED_TEXT}`,
      );
      continue;
    }
    const subject = `ServiceAccount ${ns}/${account}`;
    if (find('ServiceAccount', account, ns) === undefined) at(`${subject} (spec.serviceAccountName) is not in the tree: the operator cannot impersonate it`);
    const bindings = placed.filter(
      (p) =>
        (p.object.kind === 'ClusterRoleBinding' || p.object.kind === 'RoleBinding') &&
        typeof p.object.apiVersion === 'string' &&
        p.object.apiVersion.startsWith(RBAC_GROUP) &&
        (Array.isArray(p.object.subjects) ? p.object.subjects.filter(isRecord) : []).some(
          (s) => s.kind === 'ServiceAccount' && s.name === account && (s.namespace ?? p.namespace) === ns,
        ),
    );
    if (bindings.length === 0) at(`${subject} is bound to no role: the operator cannot apply the previews as it`);
    for (const binding of bindings) {
      const roleRef = isRecord(binding.object.roleRef) ? binding.object.roleRef : {};
      const kind = String(roleRef.kind ?? '');
      const name = String(roleRef.name ?? '');
      const bindingLabel = `${String(binding.object.kind)} ${binding.object.kind === 'RoleBinding' ? `${binding.namespace ?? ns}/` : ''}${String(metadataOf(binding.object).name ?? '')}`;
      const role = kind === 'Role' ? find('Role', name, binding.namespace) : find('ClusterRole', name);
      if (role === undefined) {
        at(
          `${subject} is bound by ${bindingLabel} to ${kind} ${name}, which the tree does not define: its grants cannot be checked (a preview's role must grant exactly ${ALLOWED_TEXT})`,
        );
        continue;
      }
      for (const issue of ruleIssues(role.object)) at(`${subject}'s ${kind} ${name} ${issue}: a preview's role must grant exactly ${ALLOWED_TEXT}`);
    }
  }
  return findings;
}
