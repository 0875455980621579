/**
 * The database side of `rotate --fresh-values`: PostgreSQL and RabbitMQ take
 * their passwords from the Secret only when they first initialise, so new
 * values in the Secret alone lock the services out. For each credential with a
 * `passwordChange` in scaffold.yaml this writes, beside its SealedSecret, a Job
 * (with its ServiceAccount and a Role limited to the objects it touches) that:
 *
 * 1. waits until the controller has unsealed THIS rotation: the SealedSecret's
 *    ciphertext of each key matches the committed one (compared by SHA-256 of
 *    the ciphertext, public data), the controller has observed that generation
 *    (it sets `status.observedGeneration` after writing the Secret) and its
 *    Synced condition is True;
 * 2. reads each new value from the Secret, refusing a missing or empty one,
 *    and sets it where the database keeps it: `ALTER ROLE … PASSWORD` through
 *    psql on the local socket, or `rabbitmqctl change_password USER` (password
 *    on stdin), inside the pod. Any failure fails the pod, which is retried.
 *
 * The Job is named by the hash of the new ciphertexts, so each rotation runs
 * once and a re-apply of the same one changes nothing. No value, and nothing
 * derived from one, is in the manifest; the value passes from the API server
 * to the database process through pipes, never on a command line.
 */
import { createHash } from 'node:crypto';
import type { PasswordChange } from './credential-schema.js';
import { toYaml } from './yaml.js';

/** Inputs of {@link passwordChangeManifest}. */
export interface PasswordChangeInput {
  readonly namespace: string;
  /** The credential's Secret (and SealedSecret) name. */
  readonly name: string;
  readonly change: PasswordChange;
  /** The new SealedSecret's `spec.encryptedData`. */
  readonly encryptedData: Readonly<Record<string, string>>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
// kubectl's JSONPath: a dot inside a field name is escaped.
const field = (key: string) => key.replaceAll('.', '\\.');
// Single quotes for sh: the names are validated (lower-case, digits, underscore), the keys Secret data keys.
const quote = (text: string) => `'${text.replaceAll("'", `'"'"'`)}'`;

/** The Job's name: the credential and the hash of this rotation's ciphertexts. */
export function passwordChangeJobName(input: Pick<PasswordChangeInput, 'name' | 'encryptedData'>): string {
  const digest = sha256(JSON.stringify(Object.entries(input.encryptedData).sort(([a], [b]) => a.localeCompare(b)))).slice(0, 10);
  return `${input.name.slice(0, 63 - '-rotation-'.length - 10)}-rotation-${digest}`;
}

/**
 * The script: wait for this rotation, then set each password in the database.
 *
 * POSIX sh (the image's, often busybox): no `pipefail`, so no value is read
 * through a pipe whose first command could fail unseen. A read that fails, or
 * finds the key empty, ends the script with an error and the Job's pod is
 * started again: `ALTER ROLE … PASSWORD ''` would have set no password at all
 * (PostgreSQL 10 and later read an empty one as none), and every login would
 * fail once the workloads restart with the new Secret.
 */
function script(input: PasswordChangeInput): string {
  const { namespace, name, change } = input;
  const keys = Object.keys(change.users).sort();
  const get = `kubectl get sealedsecret -n ${quote(namespace)} ${quote(name)}`;
  const lines = [
    'set -eu',
    // The controller writes the Secret, then sets status.observedGeneration to the generation it
    // unsealed: Synced=True alone may still be the previous rotation's.
    "# Ready when the SealedSecret holds this rotation's ciphertexts and the controller has unsealed that generation into the Secret.",
    'unsealed() {',
    ...keys.map(
      (key) =>
        `  [ "$(${get} -o jsonpath=${quote(`{.spec.encryptedData.${field(key)}}`)} | sha256sum | cut -c1-64)" = ${quote(sha256(input.encryptedData[key] ?? ''))} ] || return 1`,
    ),
    // Three words when all are set: generation, observed generation, Synced. No ${…} anywhere in the
    // script: Flux's postBuild substitution would read it as a variable of the layer.
    `  state="$(${get} -o jsonpath=${quote('{.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Synced")].status}')})" || return 1`,
    '  set -- $state',
    '  [ "$#" -eq 3 ] && [ "$1" = "$2" ] && [ "$3" = True ]',
    '}',
    'until unsealed; do sleep 5; done',
  ];
  const exec = `kubectl exec -i -n ${quote(namespace)} ${quote(change.pod)} -c ${quote(change.container)} --`;
  for (const key of keys) {
    const user = change.users[key]!;
    const missing = (what: string) => `{ echo ${quote(`${namespace}/${name}: ${what} ${key}; nothing changed, trying again`)} >&2; exit 1; }`;
    // Each step its own command: under set -e a failing kubectl or base64 ends the script.
    lines.push(`encoded="$(kubectl get secret -n ${quote(namespace)} ${quote(name)} -o jsonpath=${quote(`{.data.${field(key)}}`)})"`);
    lines.push(`[ -n "$encoded" ] || ${missing('the Secret has no')}`);
    lines.push('pw="$(printf \'%s\' "$encoded" | base64 -d)"');
    lines.push(`[ -n "$pw" ] || ${missing('the Secret holds an empty')}`);
    if (change.engine === 'postgresql') {
      const admin = change.connectAs ?? 'postgres';
      // printf is a shell builtin: the value is in no process's arguments.
      lines.push(
        `printf 'ALTER ROLE "%s" PASSWORD '"'"'%s'"'"';\\n' ${quote(user)} "$(printf '%s' "$pw" | sed "s/'/''/g")" | ${exec} psql --no-psqlrc --quiet --set ON_ERROR_STOP=1 --username=${quote(admin)} --dbname=${quote(admin)}`,
      );
    } else {
      // change_password reads the password from stdin when it is not an argument.
      lines.push(`printf '%s' "$pw" | ${exec} rabbitmqctl change_password ${quote(user)}`);
    }
    lines.push('unset pw encoded');
  }
  return `${lines.join('\n')}\n`;
}

/** The manifest (ServiceAccount, Role, RoleBinding, Job) as one YAML file. */
export function passwordChangeManifest(input: PasswordChangeInput): string {
  const { namespace, name, change } = input;
  const account = `${name.slice(0, 63 - '-password-change'.length)}-password-change`;
  const labels = { 'app.kubernetes.io/managed-by': 'gitops-scaffolder', 'app.kubernetes.io/component': 'password-change' };
  const objects = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace, labels } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: account, namespace, labels },
      rules: [
        { apiGroups: ['bitnami.com'], resources: ['sealedsecrets'], resourceNames: [name], verbs: ['get'] },
        { apiGroups: [''], resources: ['secrets'], resourceNames: [name], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods'], resourceNames: [change.pod], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods/exec'], resourceNames: [change.pod], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: account, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: passwordChangeJobName(input), namespace, labels },
      spec: {
        backoffLimit: 10,
        activeDeadlineSeconds: 3600,
        ttlSecondsAfterFinished: 604800,
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: account,
            restartPolicy: 'OnFailure',
            securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'password-change',
                image: change.image,
                command: ['sh', '-c', script(input)],
                env: [{ name: 'HOME', value: '/tmp' }],
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
                volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
              },
            ],
            volumes: [{ name: 'tmp', emptyDir: {} }],
          },
        },
      },
    },
  ];
  return objects
    .map((object, index) =>
      toYaml(
        object,
        index === 0
          ? `Sets the new ${namespace}/${name} passwords where ${change.engine === 'postgresql' ? 'PostgreSQL' : 'RabbitMQ'} keeps them (${Object.entries(
              change.users,
            )
              .map(([k, u]) => `${k} -> ${u}`)
              .join(', ')}), once the controller has unsealed this rotation. Written by gitops-scaffolder rotate --fresh-values.`
          : undefined,
      ),
    )
    .join('---\n');
}
