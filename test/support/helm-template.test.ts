/**
 * The render path that stands in for `helm template`: each case is what Go's
 * text/template and Helm's functions give for the same template (the expected
 * strings follow their documented behaviour), so the chart test can trust it.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { helmTemplate, mergeValues, truthy } from './helm-template.js';

describe('helm-template (the subset of Go templates and Helm the chart uses)', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  /** Renders one template file with `values` as the chart's values.yaml. */
  async function render(template: string, values: Record<string, unknown> = {}, helpers = ''): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'helm-template-'));
    dirs.push(dir);
    await mkdir(join(dir, 'templates'));
    await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: "4.5"\n');
    await writeFile(join(dir, 'values.yaml'), JSON.stringify(values));
    await writeFile(join(dir, 'templates', '_helpers.tpl'), helpers);
    await writeFile(join(dir, 'templates', 'a.yaml'), template);
    const { manifests } = await helmTemplate(dir, { release: 'rel', namespace: 'ns' });
    return manifests.replace(/^# Source: demo\/templates\/a\.yaml\n/gm, '');
  }

  it('trims white space at {{- and -}}, and drops comments', async () => {
    assert.equal(await render('a: 1\n{{- /* gone */}}\nb: {{ "x" -}}   \n  \nc: 2\n'), 'a: 1\nb: xc: 2\n');
  });

  it('reads .Values, .Release and .Chart; a missing value prints as nothing', async () => {
    assert.equal(await render('v: {{ .Values.a.b }}|{{ .Values.none.deeper }}|{{ .Release.Name }}/{{ .Release.Namespace }}/{{ .Release.Service }}|{{ .Chart.Name }}-{{ .Chart.Version }}-{{ .Chart.AppVersion }}', { a: { b: 7 } }), 'v: 7||rel/ns/Helm|demo-1.2.3-4.5');
  });

  it('if / else if / else with Go truth (empty list and map are false)', async () => {
    const t = '{{ if .Values.a }}a{{ else if .Values.b }}b{{ else }}none{{ end }}';
    assert.equal(await render(t, { a: [], b: { k: 1 } }), 'b');
    assert.equal(await render(t, { a: 0, b: {} }), 'none');
    assert.equal(await render(t, { a: 'x' }), 'a');
    assert.deepEqual([false, 0, '', null, [], {}].map(truthy), [false, false, false, false, false, false]);
  });

  it('range over a list sets dot; over a map, keys in sorted order with $k, $v; $ is the root', async () => {
    assert.equal(await render('{{ range .Values.l }}[{{ . }}]{{ end }}', { l: ['x', 'y'] }), '[x][y]');
    assert.equal(await render('{{ range $k, $v := .Values.m }}{{ $k }}={{ $v }}/{{ $.Release.Name }};{{ end }}', { m: { b: 2, a: 1 } }), 'a=1/rel;b=2/rel;');
    assert.equal(await render('{{ range .Values.l }}x{{ else }}empty{{ end }}', { l: [] }), 'empty');
  });

  it('with sets dot only when the value is true', async () => {
    assert.equal(await render('{{ with .Values.m }}{{ .k }}{{ else }}no{{ end }}', { m: { k: 'v' } }), 'v');
    assert.equal(await render('{{ with .Values.m }}{{ .k }}{{ else }}no{{ end }}', { m: {} }), 'no');
  });

  it('include, nindent, indent, toYaml (sorted keys, no trailing newline), quote, printf, join, default, or, dict', async () => {
    const helpers = '{{- define "x.labels" -}}\nb: {{ .Release.Name }}\na: 1\n{{- end }}';
    assert.equal(await render('m:\n  {{- include "x.labels" . | nindent 2 }}', {}, helpers), 'm:\n  b: rel\n  a: 1');
    assert.equal(await render('{{ toYaml .Values.r | indent 2 }}', { r: { z: 1, a: { c: 'x' } } }), '  a:\n    c: x\n  z: 1');
    assert.equal(await render('{{ .Values.s | quote }} {{ printf "%s:%s" .Values.s (.Values.t | default "dflt") }} {{ join "," .Values.l }}', { s: 'say "hi"', l: ['a', 'b'] }), '"say \\"hi\\"" say "hi":dflt a,b');
    assert.equal(await render('{{ if or .Values.a .Values.b }}yes{{ end }}{{ range $k, $v := dict "b" 2 "a" 1 }}{{ $k }}{{ end }}', { b: true }), 'yesab');
  });

  it('required fails the render; an unsupported function or action fails instead of rendering wrongly', async () => {
    await assert.rejects(render('{{ required "x is required" .Values.x }}'), /x is required/);
    await assert.rejects(render('{{ tpl .Values.x . }}'), /function "tpl" is not supported/);
    await assert.rejects(render('{{ template "x" . }}'), /unsupported/);
  });

  it('coalesces values like Helm: maps merged, lists and scalars replaced', () => {
    assert.deepEqual(mergeValues({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, e: 2 }), { a: { b: 1, c: [3] }, d: 1, e: 2 });
  });

  it('splits documents at --- and drops empty ones', async () => {
    assert.equal(await render('a: 1\n---\n# only a comment\n---\n{{ if false }}b: 2{{ end }}\n---\nc: 3\n'), 'a: 1\n\n---\nc: 3\n');
  });
});
