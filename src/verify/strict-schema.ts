/**
 * Turns a CRD's `openAPIV3Schema` into a JSON Schema that ajv checks the way
 * the API server would, and stricter in the one place that matters for a
 * pre-push gate: unknown fields.
 *
 * The API server prunes unknown fields silently (structural schemas), so the
 * upstream schemas never say `additionalProperties: false`. A typo such as
 * `dependOn` therefore "validates" and the dependency quietly disappears. Here
 * every object schema that lists `properties`, has no `additionalProperties`
 * and does not opt out with `x-kubernetes-preserve-unknown-fields` is closed.
 * See https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning
 */
import { isRecord } from '../model/is-record.js';

/** Formats ajv-formats implements with the meaning Kubernetes gives them. */
const KNOWN_FORMATS = new Set([
  'byte',
  'date',
  'date-time',
  'double',
  'email',
  'float',
  'hostname',
  'int32',
  'int64',
  'ipv4',
  'ipv6',
  'password',
  'uri',
  'uuid',
]);

/**
 * Keywords that only document or only matter to the API server (CEL rules are
 * checked by hand in flux-rules.ts); dropping them keeps compiled validators small.
 */
const DROPPED = new Set(['description', 'default', 'example', 'externalDocs', 'x-kubernetes-validations']);

const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } };

/**
 * `metadata` is `type: object` with no properties in every CRD (the API server
 * validates ObjectMeta itself), so it would stay open; this is the part of
 * ObjectMeta a manifest may carry, closed like the rest.
 */
const OBJECT_META = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    labels: STRING_MAP,
    annotations: STRING_MAP,
    finalizers: { type: 'array', items: { type: 'string' } },
    ownerReferences: { type: 'array', items: { type: 'object' } },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    selfLink: { type: 'string' },
    generation: { type: 'integer' },
    creationTimestamp: { type: ['string', 'null'] },
    deletionTimestamp: { type: 'string' },
    deletionGracePeriodSeconds: { type: 'integer' },
    managedFields: { type: 'array' },
  },
  required: ['name'],
  additionalProperties: false,
};

function withNull(type: unknown): unknown {
  if (typeof type === 'string') return [type, 'null'];
  if (Array.isArray(type)) return type.includes('null') ? type : [...type, 'null'];
  return type;
}

/**
 * @param node - a schema node
 * @param inBranch - inside anyOf/oneOf/allOf/not, where `properties` only
 *   constrain values the structural part already declares, so closing there would be wrong
 */
function transform(node: unknown, inBranch: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => transform(item, inBranch));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    switch (key) {
      case 'properties':
        out.properties = isRecord(value) ? Object.fromEntries(Object.entries(value).map(([name, child]) => [name, transform(child, false)])) : value;
        break;
      case 'additionalProperties':
      case 'items':
        out[key] = typeof value === 'boolean' ? value : transform(value, false);
        break;
      case 'anyOf':
      case 'oneOf':
      case 'allOf':
      case 'not':
        out[key] = transform(value, true);
        break;
      case 'format':
        // An unknown format would be a compile warning and no check at all.
        if (typeof value === 'string' && KNOWN_FORMATS.has(value)) out.format = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (node['x-kubernetes-int-or-string'] === true) {
    // Upstream spells it `anyOf: [{type: integer}, {type: string}]`; a type
    // list says the same and gives one readable error instead of three.
    out.type = ['integer', 'string'];
    delete out.anyOf;
  }
  if (node.nullable === true) {
    // ajv only understands `nullable` next to `type`; spell it as JSON Schema.
    out.type = withNull(out.type);
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  delete out.nullable;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (!inBranch && !preserve && isRecord(out.properties) && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

/**
 * The strict JSON Schema for one CRD version's `openAPIV3Schema`: unknown
 * fields closed, `x-kubernetes-int-or-string` and `nullable` spelled for
 * ajv, ObjectMeta checked, descriptions and CEL rules dropped.
 */
export function strictSchemaOf(openAPIV3Schema: unknown): Record<string, unknown> {
  const root = transform(openAPIV3Schema, false);
  const schema: Record<string, unknown> = isRecord(root) ? { ...root } : { type: 'object' };
  const properties = isRecord(schema.properties) ? schema.properties : {};
  schema.properties = { ...properties, metadata: OBJECT_META };
  const required = Array.isArray(schema.required) ? schema.required : [];
  schema.required = required.includes('metadata') ? required : [...required, 'metadata'];
  return schema;
}
