/**
 * A JSON Schema cut down to what one object can reach. A `properties` entry is
 * evaluated only against a value that is there, so the subschema of a field
 * the object does not have is replaced by `{}` (always valid, compiled to
 * nothing). The names stay: `additionalProperties: false` still knows every
 * field, and a finding still suggests the field a typo meant.
 *
 * Why: ajv compiles a schema into code, and its cost grows with the schema,
 * not the object. cert-manager's ClusterIssuer schema (every ACME solver,
 * every DNS provider, a pod template) took 107 ms to compile, paid by every
 * verifying process for the one or two issuers it checks; the part an issuer
 * uses compiles in a few milliseconds. Over a run's objects of all kinds the
 * cuts took 41–46 ms where whole schemas took 107–162.
 *
 * Sound by construction: only `properties` maps are cut, and the recursion
 * passes each subschema every value it can be evaluated against, or more
 * (`additionalProperties` gets all the object's values). Keywords it does not
 * follow (patternProperties, items as a list, if/then/else, dependencies…)
 * keep their subschemas whole.
 */
import { isRecord } from '../model/is-record.js';

/** `schema` with every `properties` entry `instance` cannot reach made `{}`. */
export function schemaForInstance(schema: unknown, instance: unknown): unknown {
  return cut(schema, [instance]);
}

function cut(node: unknown, values: readonly unknown[]): unknown {
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = { ...node };
  const objects = values.filter(isRecord);
  if (isRecord(node.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties).map(([name, child]) => {
        const reached = objects.filter((object) => Object.hasOwn(object, name)).map((object) => object[name]);
        return [name, reached.length === 0 ? {} : cut(child, reached)];
      }),
    );
  }
  if (isRecord(node.additionalProperties))
    out.additionalProperties = cut(
      node.additionalProperties,
      objects.flatMap((object) => Object.values(object)),
    );
  if (isRecord(node.items)) out.items = cut(node.items, values.filter(Array.isArray).flat());
  for (const branch of ['allOf', 'anyOf', 'oneOf'] as const) {
    const subschemas = node[branch];
    if (Array.isArray(subschemas)) out[branch] = subschemas.map((subschema) => cut(subschema, values));
  }
  if (isRecord(node.not)) out.not = cut(node.not, values);
  return out;
}
