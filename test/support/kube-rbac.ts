/**
 * Test support: the Kubernetes RBAC authorizer's decision, for the API double's
 * SubjectAccessReview. Follows k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac
 * (`RuleAllows`, `appliesTo`): a request is allowed when a rule of a role bound
 * to the user, one of their groups or their ServiceAccount matches it; RBAC
 * never denies explicitly (no opinion means "not allowed").
 *
 * - ClusterRoleBindings apply everywhere; RoleBindings (to a Role of their
 *   namespace or to a ClusterRole) only to requests in their namespace, so a
 *   cluster-scoped request (no namespace) is granted by ClusterRoleBindings only;
 * - verbs, apiGroups and resources match exactly or by `*`; a sub-resource is
 *   requested as `resource/sub` and matched by `resource/sub` or `* /sub`;
 * - resourceNames, when present, must contain the requested name (a request
 *   without a name matches no rule that has resourceNames);
 * - nonResourceURLs match exactly, by `*`, or by a prefix ending in `*`.
 */

/** A PolicyRule of a (Cluster)Role. */
export interface PolicyRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

/** The RBAC objects the evaluator reads, as they are applied (parsed YAML). */
export interface RbacObject {
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly rules?: readonly PolicyRule[];
  readonly roleRef?: { readonly kind: string; readonly name: string };
  readonly subjects?: readonly { readonly kind: string; readonly name: string; readonly namespace?: string }[];
}

/** What a SubjectAccessReview asks. */
export interface AccessQuestion {
  readonly user: string;
  readonly groups: readonly string[];
  readonly resource?: {
    readonly namespace: string;
    readonly verb: string;
    readonly group: string;
    readonly resource: string;
    readonly subresource: string;
    readonly name: string;
  };
  readonly nonResource?: { readonly path: string; readonly verb: string };
}

/** The SubjectAccessReview status RBAC gives. */
export interface AccessAnswer {
  readonly allowed: boolean;
  readonly reason?: string;
}

const has = (list: readonly string[] | undefined, value: string): boolean => (list ?? []).some((item) => item === '*' || item === value);

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  return (rule.resources ?? []).some((r) => r === '*' || r === combined || (subresource !== '' && r === `*/${subresource}`));
}

function ruleAllows(rule: PolicyRule, question: AccessQuestion): boolean {
  if (!has(rule.verbs, question.resource?.verb ?? question.nonResource?.verb ?? '')) return false;
  if (question.nonResource !== undefined) {
    const path = question.nonResource.path;
    return (rule.nonResourceURLs ?? []).some((url) => url === '*' || url === path || (url.endsWith('*') && path.startsWith(url.slice(0, -1))));
  }
  const r = question.resource;
  if (r === undefined || !has(rule.apiGroups, r.group) || !resourceMatches(rule, r.resource, r.subresource)) return false;
  return rule.resourceNames === undefined || rule.resourceNames.length === 0 || rule.resourceNames.includes(r.name);
}

function subjectMatches(subject: { readonly kind: string; readonly name: string; readonly namespace?: string }, question: AccessQuestion): boolean {
  if (subject.kind === 'User') return subject.name === question.user;
  if (subject.kind === 'Group') return question.groups.includes(subject.name);
  if (subject.kind === 'ServiceAccount') return question.user === `system:serviceaccount:${subject.namespace ?? ''}:${subject.name}`;
  return false;
}

function subjectLabel(question: AccessQuestion, subject: { readonly kind: string; readonly name: string; readonly namespace?: string }): string {
  return subject.kind === 'ServiceAccount'
    ? `ServiceAccount "${subject.name}/${subject.namespace ?? ''}"`
    : `${subject.kind} "${subject.kind === 'User' ? question.user : subject.name}"`;
}

/** Decides `question` from `objects` the way the RBAC authorizer does. */
export function rbacDecision(objects: readonly RbacObject[], question: AccessQuestion): AccessAnswer {
  const namespace = question.resource?.namespace ?? '';
  const roleOf = (kind: string, name: string, bindingNamespace?: string): RbacObject | undefined =>
    objects.find((o) => o.kind === kind && o.metadata.name === name && (kind === 'ClusterRole' || o.metadata.namespace === bindingNamespace));
  for (const binding of objects) {
    const cluster = binding.kind === 'ClusterRoleBinding';
    if (!cluster && !(binding.kind === 'RoleBinding' && namespace !== '' && binding.metadata.namespace === namespace)) continue;
    if (binding.roleRef === undefined) continue;
    const role = roleOf(binding.roleRef.kind, binding.roleRef.name, binding.metadata.namespace);
    const subject = (binding.subjects ?? []).find((s) => subjectMatches(s, question));
    if (role === undefined || subject === undefined) continue;
    if ((role.rules ?? []).some((rule) => ruleAllows(rule, question))) {
      const where = cluster ? '' : ` in namespace "${binding.metadata.namespace ?? ''}"`;
      return {
        allowed: true,
        reason: `RBAC: allowed by ${binding.kind} "${binding.metadata.name}" of ${role.kind} "${role.metadata.name}" to ${subjectLabel(question, subject)}${where}`,
      };
    }
  }
  return { allowed: false };
}
