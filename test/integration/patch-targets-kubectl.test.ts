/**
 * verify's finding for a patch whose target selects nothing
 * (src/verify/patch-targets.ts) held to the real kustomize: for generated
 * objects and generated targets (literal names, prefixes, patterns,
 * alternations, empty fields, namespaces set and unset), a build with a patch
 * that can never apply (a JSON patch `test` of an impossible name) fails
 * exactly when kustomize selected an object. A finding must never be said of a
 * target kustomize selects; and where every field is judged here, the finding
 * must be said whenever kustomize selects nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ValidationError } from '../../src/errors.js';
import { memoryRepoReader } from '../../src/gitops/repo-reader.js';
import { KubectlKustomize } from '../../src/kustomize/kubectl-kustomize.js';
import { unmatchedPatchTargets } from '../../src/verify/patch-targets.js';

const kustomize = new KubectlKustomize();

/** A JSON patch no object passes: applied to anything, the build fails. */
const NEVER_APPLIES = '- op: test\n  path: /metadata/name\n  value: "no object is named this"\n';

const KINDS = [
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'helm.toolkit.fluxcd.io/v2', kind: 'HelmRelease' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
] as const;
const NAMES = ['external-dns', 'tcr-api', 'tcr-api-worker', 'ingress-nginx', 'postgresql'] as const;
const NAMESPACES = ['tcr', 'database', 'external-dns'] as const;

const objects = fc.uniqueArray(fc.record({ type: fc.constantFrom(...KINDS), name: fc.constantFrom(...NAMES), namespace: fc.constantFrom(...NAMESPACES) }), {
  minLength: 1,
  maxLength: 4,
  selector: (o) => `${o.type.kind}/${o.namespace}/${o.name}`,
});

/** A selector field as people write them: a literal, a piece of one, a pattern, an alternation, or nothing. */
const field = (values: readonly string[]) =>
  fc.oneof(
    fc.constant(undefined),
    fc.constant(''),
    fc.constantFrom(...values),
    fc.constantFrom(...values).map((v) => v.slice(0, Math.max(1, v.length - 3))),
    fc.constantFrom(...values).map((v) => `${v.slice(0, 3)}.*`),
    fc.tuple(fc.constantFrom(...values), fc.constantFrom(...values)).map(([a, b]) => `${a}|${b}`),
    fc.constant('other'),
  );

const targets = fc.record(
  {
    group: field(['apps', 'helm.toolkit.fluxcd.io', 'networking.k8s.io']),
    version: field(['v1', 'v2']),
    kind: field(KINDS.map((k) => k.kind)),
    name: field(NAMES),
    namespace: field(NAMESPACES),
  },
  { requiredKeys: [] },
);

describe('a patch whose target selects nothing, against kubectl kustomize', { timeout: 180_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'patch-targets-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is found exactly where kustomize selects nothing, and never where it selects something', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(objects, targets, async (generated, rawTarget) => {
        const target = Object.fromEntries(Object.entries(rawTarget).filter(([, v]) => v !== undefined));
        const resources = generated.map((o) => ({ apiVersion: o.type.apiVersion, kind: o.type.kind, metadata: { name: o.name, namespace: o.namespace } }));
        const kustomization = stringify({ resources: ['resources.yaml'], patches: [{ path: 'never.yaml', target }] });
        const case_ = join(dir, `case-${n++}`);
        await mkdir(case_);
        const stream = resources.map((r) => stringify(r)).join('---\n');
        await writeFile(join(case_, 'resources.yaml'), stream);
        await writeFile(join(case_, 'never.yaml'), NEVER_APPLIES);
        await writeFile(join(case_, 'kustomization.yaml'), kustomization);
        let selected: boolean;
        try {
          await kustomize.build(case_, '.');
          selected = false;
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          selected = true;
        }
        const reader = memoryRepoReader(
          new Map([
            ['layer/kustomization.yaml', kustomization],
            ['layer/resources.yaml', stream],
            ['layer/never.yaml', NEVER_APPLIES],
          ]),
        );
        const findings = await unmatchedPatchTargets(reader, 'layer', resources);
        assert.ok(!(selected && findings.length > 0), `a finding for a target kustomize selects: ${JSON.stringify(target)} over ${stream}`);
        // Every object here has a namespace and every field is portable: each target is judged.
        assert.equal(findings.length > 0, !selected, `kustomize ${selected ? 'selected' : 'selected nothing'}: ${JSON.stringify(target)} over ${stream}`);
        if (findings.length > 0) assert.match(findings[0]!.message, /targets .* skips a patch whose target selects nothing/);
      }),
      { numRuns: 40 },
    );
  });
});
