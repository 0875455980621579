import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { instance, type Viz } from '@viz-js/viz';
import { renderSvg } from './render-svg.js';
import { clusterGraph, type TestLayer } from './test-graphs.js';

const reference: readonly TestLayer[] = [
  { name: 'infrastructure', healthChecks: [{ kind: 'HelmRelease', name: 'sealed-secrets', namespace: 'kube-system' }] },
  { name: 'apps', dependsOn: ['infrastructure'], healthChecks: [{ kind: 'HelmRelease', name: 'podinfo', namespace: 'apps' }] },
  { name: 'database', dependsOn: ['infrastructure'], healthChecks: [{ kind: 'HelmRelease', name: 'postgresql', namespace: 'database' }] },
  { name: 'cert-manager-config', dependsOn: ['infrastructure'] },
];

interface Element {
  readonly name: string;
  readonly attributes: Map<string, string>;
  readonly children: Element[];
  text: string;
}

const ENTITY = /&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);/g;

/**
 * A small, strict XML reader: enough to prove the document is well formed
 * (one root, tags balanced, attributes quoted and unique, no raw `<` or stray
 * `&` in text or attribute values) and to walk it.
 */
function parseXml(xml: string): Element {
  const token = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>|<\/([\w:.-]+)\s*>|<([\w:.-]+)((?:\s+[\w:.-]+\s*=\s*"[^"]*")*)\s*(\/?)>|([^<]+)|(<)/g;
  const checkText = (text: string): void => assert.doesNotMatch(text.replace(ENTITY, ''), /[&<]/, `bad character data ${JSON.stringify(text.slice(0, 80))}`);
  const root: Element = { name: '#document', attributes: new Map(), children: [], text: '' };
  const stack: Element[] = [root];
  for (const match of xml.matchAll(token)) {
    const [, close, open, attributes, selfClosing, text, stray] = match;
    assert.equal(stray, undefined, `unparseable markup at ${match.index}: ${xml.slice(match.index, match.index + 80)}`);
    const parent = stack.at(-1)!;
    if (close !== undefined) {
      assert.equal(close, parent.name, `</${close}> closes <${parent.name}>`);
      stack.pop();
    } else if (open !== undefined) {
      const element: Element = { name: open, attributes: new Map(), children: [], text: '' };
      for (const [, name, value] of (attributes ?? '').matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)) {
        assert.ok(!element.attributes.has(name!), `attribute ${name} once on <${open}>`);
        checkText(value!);
        element.attributes.set(name!, value!);
      }
      parent.children.push(element);
      if (selfClosing !== '/') stack.push(element);
    } else if (text !== undefined) {
      checkText(text);
      if (stack.length === 1) assert.match(text, /^\s*$/, 'no text outside the root');
      parent.text += text;
    }
  }
  assert.equal(stack.length, 1, `unclosed <${stack.at(-1)!.name}>`);
  assert.equal(root.children.length, 1, 'exactly one root element');
  return root.children[0]!;
}

function* walk(element: Element): Generator<Element> {
  yield element;
  for (const child of element.children) yield* walk(child);
}

const groups = (svg: Element, className: string): Element[] => [...walk(svg)].filter((e) => e.name === 'g' && e.attributes.get('class') === className);

const titleOf = (element: Element): string | undefined => element.children.find((c) => c.name === 'title')?.text;

describe('renderSvg', () => {
  let viz: Viz;
  before(async () => {
    viz = await instance();
  });

  it('is a well-formed SVG document with one <g class="node"> per Kustomization, with ids', async () => {
    const svg = parseXml(await renderSvg(clusterGraph(reference), { viz }));
    assert.equal(svg.name, 'svg');
    const nodes = groups(svg, 'node');
    assert.deepEqual(
      nodes.map((g) => g.attributes.get('id')),
      ['node-flux-system-apps', 'node-flux-system-cert-manager-config', 'node-flux-system-database', 'node-flux-system-infrastructure'],
    );
    assert.deepEqual(nodes.map(titleOf), [
      'flux&#45;system/apps',
      'flux&#45;system/cert&#45;manager&#45;config',
      'flux&#45;system/database',
      'flux&#45;system/infrastructure',
    ]);
  });

  it('writes ids literally, so a page can find them by text or by getElementById', async () => {
    const text = await renderSvg(clusterGraph(reference), { viz });
    assert.match(text, /<g id="node-flux-system-apps" class="node">/);
    assert.match(text, /<g id="edge-flux-system-infrastructure--flux-system-apps" class="edge">/);
    assert.doesNotMatch(text, /<!--/, 'no Graphviz comments (they carry its version)');
  });

  it('has a title and a description for assistive technology', async () => {
    const svg = parseXml(await renderSvg(clusterGraph(reference), { viz }));
    assert.equal(svg.attributes.get('role'), 'img');
    assert.equal(svg.attributes.get('aria-labelledby'), 'flux-graph-title flux-graph-desc');
    const [title, desc] = svg.children;
    assert.equal(title!.name, 'title');
    assert.equal(title!.attributes.get('id'), 'flux-graph-title');
    assert.equal(title!.text, 'Flux dependency graph');
    assert.equal(desc!.name, 'desc');
    assert.match(desc!.text, /^4 Flux Kustomizations\. /);
    assert.match(desc!.text, /flux-system\/apps \(\.\/clusters\/eu-prod-1\/apps\) depends on flux-system\/infrastructure\./);
    assert.match(desc!.text, /flux-system\/infrastructure \(\.\/clusters\/eu-prod-1\/infrastructure\) has no dependencies\./);
  });

  it('draws every dependsOn as an edge and shows paths and health checks', async () => {
    const svg = parseXml(await renderSvg(clusterGraph(reference), { viz }));
    assert.deepEqual(groups(svg, 'edge').map(titleOf), [
      'flux&#45;system/infrastructure&#45;&gt;flux&#45;system/apps',
      'flux&#45;system/infrastructure&#45;&gt;flux&#45;system/cert&#45;manager&#45;config',
      'flux&#45;system/infrastructure&#45;&gt;flux&#45;system/database',
    ]);
    const infrastructure = groups(svg, 'node').find((g) => g.attributes.get('id') === 'node-flux-system-infrastructure')!;
    const texts = infrastructure.children.filter((c) => c.name === 'text').map((t) => t.text.replace(/&#45;/g, '-'));
    assert.deepEqual(texts, ['infrastructure', './clusters/eu-prod-1/infrastructure', '✓ HelmRelease/sealed-secrets']);
  });

  it('gives every label the width Graphviz sized its box for, so a wider font cannot overflow it', async () => {
    const svg = await renderSvg(clusterGraph(reference), { viz });
    const texts = [...svg.matchAll(/<text\b([^>]*)>([^<]*)<\/text>/g)];
    assert.ok(texts.length >= 8, `only ${texts.length} texts`);
    for (const [, attributes = ''] of texts) {
      assert.match(attributes, /\blengthAdjust="spacingAndGlyphs"/);
      const width = Number(/\btextLength="([\d.]+)"/.exec(attributes)?.[1]);
      assert.ok(width > 0, attributes);
    }
    // A longer text gets a longer width: the measure is per text, not one for all.
    const widthOf = (text: string) => Number(new RegExp(`textLength="([\\d.]+)"[^>]*>${text}</text>`).exec(svg)?.[1]);
    assert.ok(widthOf('cert&#45;manager&#45;config') > widthOf('apps'));
  });

  it('stays well formed when a name holds quotes, markup and backslashes', async () => {
    const hostile = ['a"b', '<script>alert(1)</script>', 'amp&amp;', 'trailing\\', '-->'];
    const graph = clusterGraph([{ name: 'infrastructure' }, ...hostile.map((name) => ({ name, dependsOn: ['infrastructure'] }))]);
    const svg = parseXml(await renderSvg(graph, { viz }));
    assert.equal(groups(svg, 'node').length, 1 + hostile.length);
    assert.equal(groups(svg, 'edge').length, hostile.length);
    assert.ok(![...walk(svg)].some((e) => e.name === 'script'));
  });

  it('still draws a dependsOn loop, its edges marked, and says so in the description', async () => {
    const graph = clusterGraph([{ name: 'infrastructure' }, { name: 'apps', dependsOn: ['database'] }, { name: 'database', dependsOn: ['apps'] }]);
    const svg = parseXml(await renderSvg(graph, { viz }));
    assert.equal(groups(svg, 'node').length, 3);
    assert.equal(groups(svg, 'edge cycle').length, 2);
    assert.match(svg.children[1]!.text, /Dependency loop: flux-system\/apps → flux-system\/database → flux-system\/apps\./);
  });

  it('marks a dependency absent from the cluster as a missing node, not a Kustomization', async () => {
    const svg = parseXml(await renderSvg(clusterGraph([{ name: 'apps', dependsOn: ['infrastructure'] }]), { viz }));
    assert.deepEqual(
      groups(svg, 'node').map((g) => g.attributes.get('id')),
      ['node-flux-system-apps'],
    );
    assert.deepEqual(
      groups(svg, 'node missing').map((g) => g.attributes.get('id')),
      ['node-flux-system-infrastructure'],
    );
  });

  it('is byte-identical across calls, with a shared Graphviz instance or a fresh one', async () => {
    const shared = await renderSvg(clusterGraph(reference), { viz });
    assert.equal(await renderSvg(clusterGraph(reference), { viz }), shared);
    assert.equal(await renderSvg(clusterGraph([...reference].reverse())), shared);
  });
});
