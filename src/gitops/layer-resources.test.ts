/**
 * The objects a layer overlay derives its components from, found without
 * parsing the files that cannot hold one: checked against the yaml package
 * reading every file, on texts that hide a kind behind escapes, aliases and
 * every scalar style.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ValidationError } from '../errors.js';
import { isRecord } from '../model/is-record.js';
import { layerResourceObjects, mayHoldKind, parseLayerResource } from './layer-resources.js';
import { memoryRepoReader } from './repo-reader.js';
import { parseYamlDocuments } from './yaml.js';

const LAYER = 'clusters/development/apps';
const KINDS = ['Ingress', 'HelmRelease'] as const;

/** The layer's objects of KINDS, and the files that were parsed to find them. */
async function found(files: Record<string, string>): Promise<{ objects: unknown[]; parsed: string[] }> {
  const parsed: string[] = [];
  const reader = memoryRepoReader(new Map(Object.entries(files).map(([name, text]) => [`${LAYER}/${name}`, text])));
  const resources = Object.keys(files)
    .map((name) => `- ${name}\n`)
    .join('');
  const objects = await layerResourceObjects(reader, LAYER, `resources:\n${resources}`, KINDS, (text, file) => {
    parsed.push(file.slice(LAYER.length + 1));
    return parseYamlDocuments(text, file);
  });
  return { objects: objects.map((o) => o.object), parsed };
}

/** What reading every document of `text` finds: the objects of KINDS. */
function everyObjectOfKinds(text: string): unknown[] {
  return parseYamlDocuments(text, 'objects.yaml').filter((o) => isRecord(o) && (KINDS as readonly string[]).includes(String(o.kind)));
}

const hex = (code: number, width: number) => code.toString(16).padStart(width, '0');

/** One character of a double-quoted scalar, written as itself or as one of YAML's escapes. */
const doubleQuotedChar = (char: string) =>
  fc.constantFrom(char, `\\x${hex(char.charCodeAt(0), 2)}`, `\\u${hex(char.charCodeAt(0), 4)}`, `\\U${hex(char.charCodeAt(0), 8)}`);

/** A document whose kind is `kind`, its scalar written in one of the ways YAML allows. */
const documentOf = (kind: string, index: number) =>
  fc.oneof(
    fc.constant(`apiVersion: v1\nkind: ${kind}\nmetadata:\n  name: o${index}\n`),
    fc.constant(`apiVersion: v1\nkind: '${kind}'\nmetadata:\n  name: o${index}\n`),
    fc.constant(`apiVersion: v1\nkind: |-\n  ${kind}\nmetadata:\n  name: o${index}\n`),
    fc.constant(`{apiVersion: v1, kind: ${kind}, metadata: {name: o${index}}}\n`),
    fc.constant(`apiVersion: v1\nmetadata:\n  name: o${index}\n  labels: {k: &kind${index} ${kind}}\nkind: *kind${index}\n`),
    fc.constant(`apiVersion: v1\nkind: !!str ${kind}\nmetadata:\n  name: o${index}\n`),
    fc.tuple(...[...kind].map(doubleQuotedChar)).map((chars) => `apiVersion: v1\nkind: "${chars.join('')}"\nmetadata:\n  name: o${index}\n`),
  );

/** A file of one to four documents, of kinds looked for, of others, and of near misses. */
const fileText = fc
  .array(fc.constantFrom('Ingress', 'HelmRelease', 'Service', 'HelmRepository', 'IngressClass', 'Ingres', 'Namespace'), { minLength: 1, maxLength: 4 })
  .chain((kinds) => fc.tuple(...kinds.map((kind, i) => documentOf(kind, i))))
  .map((documents) => documents.join('---\n'));

describe('layerResourceObjects', () => {
  it('finds the objects of the kinds asked for, in whatever way a file writes the kind, exactly as reading every file does', async () => {
    await fc.assert(
      fc.asyncProperty(fileText, async (text) => {
        const { objects } = await found({ 'objects.yaml': text });
        assert.deepEqual(objects, everyObjectOfKinds(text));
      }),
      { numRuns: 300 },
    );
  });

  it('parses no file that cannot hold a kind asked for, so a broken one is left for kustomize to report', async () => {
    const { objects, parsed } = await found({
      'namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n',
      'broken.yaml': 'apiVersion: v1\nkind: Service\nmetadata: [\n',
      'ingress.yaml': 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n',
      'escaped.yaml': 'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: "Helm\\x52elease"\nmetadata:\n  name: external-dns\n',
    });
    assert.deepEqual(parsed.sort(), ['escaped.yaml', 'ingress.yaml']);
    assert.deepEqual(
      objects.map((o) => (isRecord(o) ? o.kind : undefined)),
      ['Ingress', 'HelmRelease'],
    );
  });

  it('still refuses a file that may hold one and is not valid YAML', async () => {
    await assert.rejects(found({ 'ingress.yaml': 'kind: Ingress\nmetadata: [\n' }), ValidationError);
  });
});

describe('mayHoldKind', () => {
  it('answers yes for a kind named in the text or any escape, and no otherwise', () => {
    assert.equal(mayHoldKind('kind: Ingress\n', KINDS), true);
    assert.equal(mayHoldKind('kind: "In\\x67ress"\n', KINDS), true);
    assert.equal(mayHoldKind('kind: IngressClass\n', KINDS), true);
    assert.equal(mayHoldKind('kind: Service\n', KINDS), false);
    assert.equal(mayHoldKind('kind: Ingr ess\n', KINDS), false);
  });
});

describe('parseLayerResource', () => {
  it('reads a text once for the whole process and shares its objects, frozen, whatever file holds it (verify reads the same files)', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared-by-renders\n';
    const first = parseLayerResource(text, 'base/config.yaml');
    assert.equal(parseLayerResource(text, 'base/config.yaml')[0], first[0]);
    assert.equal(parseLayerResource(text, 'clusters/development/apps/config.yaml')[0], first[0]);
    assert.ok(Object.isFrozen(first[0]));
    assert.throws(() => ((first[0] as { kind: string }).kind = 'Secret'), TypeError);
  });

  it('names the file it was asked about in an error, though the text was read once', () => {
    const text = 'kind: ConfigMap\nmetadata: {name: [\n';
    for (const file of ['base/a.yaml', 'base/b.yaml']) {
      assert.throws(
        () => parseLayerResource(text, file),
        (error: unknown) => error instanceof ValidationError && error.issues[0]?.field === file && /^invalid YAML: /.test(error.issues[0].message),
      );
    }
  });
});
