import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { assertKustomizationConfined } from './kustomization-paths.js';

const FILE = 'clusters/eu/kustomization.yaml';
const refused = (pattern: RegExp) => (error: unknown) => error instanceof ValidationError && pattern.test(error.message);

describe('assertKustomizationConfined', () => {
  it('refuses a path that climbs out in any field that names local paths', () => {
    for (const text of [
      'resources: [../../../host]\n',
      'bases: [../../../host]\n',
      'components: [../../../host]\n',
      'crds: [../../../host/crd.yaml]\n',
      'patches:\n- path: ../../../host/p.yaml\n',
      'configMapGenerator:\n- name: c\n  files: [key=../../../host/secret]\n',
      'secretGenerator:\n- name: s\n  envs: [../../../host/.env]\n',
      'helmGlobals:\n  chartHome: ../../../host\n',
      'resources: [ok.yaml]\n---\nresources: [../../../host]\n',
    ])
      assert.throws(() => assertKustomizationConfined(FILE, text), refused(/clusters\/eu\/kustomization\.yaml names a path outside the repository/), text);
  });

  it('reads an entry that looks like a URL as the path kustomize falls back to: one that climbs out is refused', () => {
    // kubectl 1.35 built the host directory for each of these: no git URL parser takes them, so they are paths.
    for (const entry of [
      'github.com/../../../../host',
      'gitlab.com/../../../../host',
      'a://../../../../host',
      'https://../../../../host',
      'ssh://../../../../host',
    ])
      assert.throws(() => assertKustomizationConfined(FILE, `resources: ['${entry}']\n`), refused(/climbs out/), entry);
    // And a real remote base, which never climbs, is kustomize's to fetch.
    for (const entry of [
      'https://github.com/org/repo//deploy?ref=v1.2.0',
      'github.com/org/repo/deploy?ref=v1',
      'git@github.com:org/repo.git//x',
      'ssh://git@example.net/org/repo',
    ])
      assert.doesNotThrow(() => assertKustomizationConfined(FILE, `resources: ['${entry}']\n`), entry);
  });

  it('refuses a file: URL, which kustomize clones from the host with git', () => {
    for (const entry of ['file:///srv/data/repos/other.git', 'FILE:///srv/x', 'file://localhost/srv/x'])
      assert.throws(() => assertKustomizationConfined(FILE, `resources: ['${entry}']\n`), refused(/file: URL/), entry);
  });

  it('refuses an alias bomb rather than skipping the document it hides paths in', () => {
    const aliases = Array.from({ length: 120 }, (_, i) => `  k${i}: *a`).join('\n');
    const bomb = `anchors:\n  x: &a [1]\n${aliases}\nresources: [../../../host]\n`;
    assert.throws(() => assertKustomizationConfined(FILE, bomb), refused(/alias/));
  });

  it('accepts paths that stay inside, above the kustomization included', () => {
    assertKustomizationConfined(FILE, 'resources: [../../base, ./local.yaml, sub]\ncomponents: [../../components/x]\n');
  });
});
