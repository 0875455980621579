/**
 * ObjectValidator for the built-in Kubernetes kinds, derived from
 * @kubernetes/client-node's generated model metadata: every model class has a
 * static `attributeTypeMap` (JSON name, TypeScript type, format), the same
 * table its ObjectSerializer walks. No OpenAPI document for the core kinds
 * ships offline, and this one is installed and tracks a current Kubernetes
 * (v1.34 for client-node 1.4). The package ships the table itself
 * (`schemas/core-kinds.json`, written by `scripts/core-kind-models.mjs`):
 * importing the model classes is 718 ES modules, 0.14-0.22 CPU-s in every
 * verifying process, where the table parses in about a millisecond. Its test
 * fails when the installed client-node gives another table.
 *
 * Checked strictly, like the CRDs: an unknown field (`spec.replica`) is an
 * issue, because the API server would drop it without a word; so is a wrong
 * primitive type, and a missing `metadata.name`.
 *
 * An edge only because it reads the table's file; the walk itself is pure.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FieldIssue } from '../errors.js';
import { packageRoot } from '../package-paths.js';
import { closestName } from '../verify/closest-name.js';
import { fieldPath } from '../verify/field-path.js';
import { isRecord } from '../model/is-record.js';
import type { ObjectCheck, ObjectValidator } from '../verify/object-validator.js';

/** One row of a client-node model's attributeTypeMap. */
interface Attribute {
  /** The field's JSON name. */
  readonly baseName: string;
  /** `string`, `number`, `boolean`, `Date`, `any`, `IntOrString`, `Array<T>`, `{ [key: string]: T; }`, or a model name. */
  readonly type: string;
  readonly format: string;
}

/** `schemas/core-kinds.json`: each model class's attributeTypeMap as [JSON name, type, format] rows. */
export interface CoreKindTable {
  /** The client-node release it was read from. */
  readonly source: string;
  readonly models: Readonly<Record<string, readonly (readonly [string, string, string])[]>>;
}

/** Each model class's attributes, by class name. */
type Models = ReadonlyMap<string, readonly Attribute[]>;

/** The table shipped with the package. */
export function defaultCoreKindTable(): string {
  return join(packageRoot(), 'schemas', 'core-kinds.json');
}

/**
 * The built-in kinds a GitOps tree carries, by apiVersion. The model class is
 * `<Version><Kind>` (V1Deployment, V2HorizontalPodAutoscaler); the group is
 * what disambiguates, which the class name alone does not (V1Service is
 * `v1` only, not any group's Service).
 */
const BUILT_IN_KINDS: Readonly<Record<string, readonly string[]>> = {
  v1: [
    'ConfigMap',
    'Endpoints',
    'LimitRange',
    'Namespace',
    'PersistentVolume',
    'PersistentVolumeClaim',
    'Pod',
    'PodTemplate',
    'ReplicationController',
    'ResourceQuota',
    'Secret',
    'Service',
    'ServiceAccount',
  ],
  'admissionregistration.k8s.io/v1': [
    'MutatingWebhookConfiguration',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
    'ValidatingWebhookConfiguration',
  ],
  'apiextensions.k8s.io/v1': ['CustomResourceDefinition'],
  'apiregistration.k8s.io/v1': ['APIService'],
  'apps/v1': ['ControllerRevision', 'DaemonSet', 'Deployment', 'ReplicaSet', 'StatefulSet'],
  'autoscaling/v1': ['HorizontalPodAutoscaler'],
  'autoscaling/v2': ['HorizontalPodAutoscaler'],
  'batch/v1': ['CronJob', 'Job'],
  'certificates.k8s.io/v1': ['CertificateSigningRequest'],
  'coordination.k8s.io/v1': ['Lease'],
  'discovery.k8s.io/v1': ['EndpointSlice'],
  'networking.k8s.io/v1': ['Ingress', 'IngressClass', 'NetworkPolicy'],
  'node.k8s.io/v1': ['RuntimeClass'],
  'policy/v1': ['PodDisruptionBudget'],
  'rbac.authorization.k8s.io/v1': ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
  'scheduling.k8s.io/v1': ['PriorityClass'],
  'storage.k8s.io/v1': ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'],
};

/**
 * Groups whose kinds moved (or went away): an object here under a version not
 * listed above is an API the cluster no longer serves, not an unknown kind.
 * `extensions` is the pre-1.16 home of Deployment, Ingress, NetworkPolicy….
 */
const BUILT_IN_GROUPS = new Set([...Object.keys(BUILT_IN_KINDS).map((v) => (v.includes('/') ? v.split('/')[0]! : '')), 'extensions']);

/**
 * resource.Quantity fields. client-node types them as `string`, but the API
 * accepts a JSON number too (`cpu: 1`), so they need their own check.
 */
const QUANTITY_FIELDS = new Set([
  'V1ResourceRequirements.limits',
  'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits',
  'V1VolumeResourceRequirements.requests',
  'V1LimitRangeItem.default',
  'V1LimitRangeItem.defaultRequest',
  'V1LimitRangeItem.max',
  'V1LimitRangeItem.maxLimitRequestRatio',
  'V1LimitRangeItem.min',
  'V1ResourceQuotaSpec.hard',
  'V1PersistentVolumeSpec.capacity',
  'V1PodSpec.overhead',
  'V1Overhead.podFixed',
  'V1EmptyDirVolumeSource.sizeLimit',
  'V2MetricTarget.averageValue',
  'V2MetricTarget.value',
]);
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?(\d+(\.\d*)?|\.\d+))?$/;

const ARRAY = /^Array<(.+)>$/;
const MAP = /^\{ \[key: string\]: (.+); \}$/;

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (isRecord(value)) return 'object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function classNameOf(apiVersion: string, kind: string): string {
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
}

/** Validates built-in kinds against client-node's model metadata; reads the table on first use. */
export class CoreKindValidator implements ObjectValidator {
  #models?: Promise<Models>;

  /** @param table - the table's file. @default defaultCoreKindTable() */
  constructor(private readonly table: string = defaultCoreKindTable()) {}

  async validate(object: unknown): Promise<ObjectCheck> {
    if (!isRecord(object) || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') {
      return { status: 'unknown-kind' };
    }
    const { apiVersion, kind } = object;
    if (!BUILT_IN_KINDS[apiVersion]?.includes(kind)) {
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
      const served = Object.entries(BUILT_IN_KINDS)
        .filter(([version, kinds]) => kinds.includes(kind) && (group === 'extensions' || (version.includes('/') ? version.split('/')[0] : '') === group))
        .map(([version]) => version);
      if (BUILT_IN_GROUPS.has(group) && served.length > 0) {
        return {
          status: 'checked',
          issues: [{ field: 'apiVersion', message: `${apiVersion} ${kind} is not served by current Kubernetes: use ${served.join(' or ')}` }],
        };
      }
      return { status: 'unknown-kind' };
    }
    const models = await this.#load();
    const className = classNameOf(apiVersion, kind);
    if (attributesOf(models, className) === undefined) return { status: 'unknown-kind' };
    const issues: FieldIssue[] = [];
    checkValue(models, object, className, '', [], issues);
    const metadata = isRecord(object.metadata) ? object.metadata : {};
    const named = (typeof metadata.name === 'string' && metadata.name !== '') || typeof metadata.generateName === 'string';
    if (!named) issues.push({ field: 'metadata.name', message: 'required field is missing' });
    return { status: 'checked', issues };
  }

  #load(): Promise<Models> {
    this.#models ??= readFile(this.table, 'utf8').then((text) => {
      const { models } = JSON.parse(text) as CoreKindTable;
      return new Map(Object.entries(models).map(([name, rows]) => [name, rows.map(([baseName, type, format]) => ({ baseName, type, format }))]));
    });
    return this.#models;
  }
}

function attributesOf(models: Models, className: string): readonly Attribute[] | undefined {
  return models.get(className);
}

/**
 * Walks `value` as client-node type `type`. `null` is accepted anywhere: the
 * API server treats an explicit null as an unset field.
 */
function checkValue(models: Models, value: unknown, type: string, format: string, path: readonly (string | number)[], issues: FieldIssue[]): void {
  if (value === null || value === undefined) return;
  const wrong = (expected: string): void => {
    issues.push({ field: fieldPath(path), message: `must be ${expected} (got ${describe(value)})` });
  };
  switch (type) {
    case 'any':
      return;
    case 'string':
    case 'Date':
      if (typeof value !== 'string') wrong('string');
      return;
    case 'boolean':
      if (typeof value !== 'boolean') wrong('boolean');
      return;
    case 'number':
      if (format === 'int32' || format === 'int64') {
        if (typeof value !== 'number' || !Number.isInteger(value)) wrong('integer');
      } else if (typeof value !== 'number') wrong('number');
      return;
    case 'IntOrString':
      if (!(typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)))) wrong('integer or string');
      return;
    case 'Quantity':
      if (typeof value === 'number') return;
      if (typeof value !== 'string') wrong('quantity (number or string)');
      else if (!QUANTITY.test(value)) issues.push({ field: fieldPath(path), message: `${JSON.stringify(value)} is not a quantity (such as 500m, 1, 512Mi)` });
      return;
  }
  const array = ARRAY.exec(type);
  if (array) {
    if (!Array.isArray(value)) return wrong('array');
    value.forEach((item, index) => checkValue(models, item, array[1]!, '', [...path, index], issues));
    return;
  }
  const map = MAP.exec(type);
  if (map) {
    if (!isRecord(value)) return wrong('object');
    for (const [key, item] of Object.entries(value)) checkValue(models, item, map[1]!, '', [...path, key], issues);
    return;
  }
  const attributes = attributesOf(models, type);
  // A type name client-node does not define: nothing to check against.
  if (attributes === undefined) return;
  if (!isRecord(value)) return wrong('object');
  const byName = new Map(attributes.map((a) => [a.baseName, a]));
  for (const [key, child] of Object.entries(value)) {
    const attribute = byName.get(key);
    if (attribute === undefined) {
      const suggestion = closestName(key, byName.keys());
      issues.push({ field: fieldPath([...path, key]), message: `unknown field${suggestion ? ` (did you mean ${suggestion}?)` : ''}` });
      continue;
    }
    let childType = attribute.type;
    if (QUANTITY_FIELDS.has(`${type}.${attribute.baseName}`)) {
      childType = MAP.test(childType) ? '{ [key: string]: Quantity; }' : 'Quantity';
    }
    checkValue(models, child, childType, attribute.format, [...path, key], issues);
  }
}
