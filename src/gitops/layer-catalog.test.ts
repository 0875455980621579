import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { platformDir } from '../package-paths.js';
import { conditionHolds, expandLayerPath, resolveClusterAttributes, selectLayers } from './layer-catalog.js';
import { parsePlatformDescriptor, type PlatformDescriptor } from './platform-descriptor.js';

const matrix = parsePlatformDescriptor(readFileSync(join(platformDir('matrix-example'), 'scaffold.yaml'), 'utf8'));

/** A descriptor from its catalog part, in YAML. */
function descriptor(yaml: string): PlatformDescriptor {
  return parsePlatformDescriptor(`apiVersion: gitops-scaffolder.io/v1alpha1\nkind: Platform\n${yaml}`);
}

const ATTRIBUTES = `attributes:
  role: { values: [a, b], default: a }
  infra_provider: { values: [x, y, z], selfHosted: [x] }
`;

function select(d: PlatformDescriptor, cluster: { role?: string; infra_provider?: string; dns_provider?: string }) {
  const selection = selectLayers(d.layers ?? [], resolveClusterAttributes(d.attributes, cluster));
  return { order: selection.layers.map((l) => (l.dependsOn.length ? `${l.name}<-${l.dependsOn.join(',')}` : l.name)), skipped: selection.skipped };
}

describe('resolveClusterAttributes', () => {
  it('takes the given value, else the one rendered before, else the default; self-hosted follows the provider', () => {
    assert.deepEqual(resolveClusterAttributes(matrix.attributes, { role: 'tooling', infra_provider: 'aws', dns_provider: 'route53' }), {
      role: 'tooling',
      infra_provider: 'aws',
      dns_provider: 'route53',
      self_hosted: false,
    });
    assert.deepEqual(resolveClusterAttributes(matrix.attributes, {}), {
      role: 'env',
      infra_provider: 'proxmox',
      dns_provider: 'digitalocean',
      self_hosted: true,
    });
    assert.deepEqual(
      resolveClusterAttributes(matrix.attributes, { role: 'env' }, { role: 'tooling', infra_provider: 'gcp', dns_provider: 'no-longer-known' }),
      {
        role: 'env',
        infra_provider: 'gcp',
        dns_provider: 'digitalocean',
        self_hosted: false,
      },
    );
  });

  it('names the field and lists the known values for an unknown value, and requires one without default', () => {
    assert.throws(
      () => resolveClusterAttributes(matrix.attributes, { role: 'ops', dns_provider: 'bind' }),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.message ===
          'cluster.role: "ops" is not a role this platform knows: one of tooling, env; cluster.dns_provider: "bind" is not a DNS provider this platform knows: one of digitalocean, cloudflare, route53, clouddns, rfc2136, designate',
    );
    const d = descriptor(`${ATTRIBUTES}layers:\n  - { name: one, path: one }\n`);
    assert.throws(
      () => resolveClusterAttributes(d.attributes, {}),
      /^ValidationError: cluster\.infra_provider: is required by this platform \(one of x, y, z\); scaffold\.yaml sets no default$/,
    );
  });

  it('refuses an attribute the platform does not declare (the default platform declares none)', () => {
    const none = parsePlatformDescriptor(readFileSync(join(platformDir(), 'scaffold.yaml'), 'utf8'));
    assert.deepEqual(resolveClusterAttributes(none.attributes, {}), {});
    assert.throws(
      () => resolveClusterAttributes(none.attributes, { role: 'env' }),
      /^ValidationError: cluster\.role: this platform's scaffold\.yaml declares no attributes\.role/,
    );
  });
});

describe('selectLayers', () => {
  it('keeps the layers whose condition holds, in topological order with catalog order between equals', () => {
    const d = descriptor(`${ATTRIBUTES}layers:
  - { name: late, path: late, dependsOn: [base] }
  - { name: base, path: base }
  - { name: only-b, path: b, dependsOn: [base], when: { role: [b] } }
  - { name: self, path: s, dependsOn: [base], when: { self_hosted: true } }
  - { name: managed, path: m, dependsOn: [base], when: { self_hosted: false, role: [a] } }
`);
    assert.deepEqual(select(d, { infra_provider: 'x' }), { order: ['base', 'late<-base', 'self<-base'], skipped: ['only-b', 'managed'] });
    assert.deepEqual(select(d, { role: 'b', infra_provider: 'y' }), { order: ['base', 'late<-base', 'only-b<-base'], skipped: ['self', 'managed'] });
    assert.deepEqual(select(d, { role: 'a', infra_provider: 'z' }).order, ['base', 'late<-base', 'managed<-base']);
  });

  it('rewires a dependency on a skipped layer to its own dependencies, recursively, deduplicated', () => {
    const d = descriptor(`${ATTRIBUTES}layers:
  - { name: root, path: root }
  - { name: other, path: other }
  - { name: gone1, path: g1, dependsOn: [root, other], when: { role: [b] } }
  - { name: gone2, path: g2, dependsOn: [gone1, root], when: { role: [b] } }
  - { name: leaf, path: leaf, dependsOn: [gone2] }
`);
    assert.deepEqual(select(d, { role: 'a', infra_provider: 'x' }), { order: ['root', 'other', 'leaf<-root,other'], skipped: ['gone1', 'gone2'] });
    assert.deepEqual(select(d, { role: 'b', infra_provider: 'x' }).order, ['root', 'other', 'gone1<-root,other', 'gone2<-gone1,root', 'leaf<-gone2']);
  });

  it('drops a stand-in another dependency already depends on, but never a dependency the catalog lists', () => {
    const d = descriptor(`${ATTRIBUTES}layers:
  - { name: base, path: base }
  - { name: vx, path: vx, dependsOn: [base], when: { infra_provider: [x] } }
  - { name: vy, path: vy, dependsOn: [base], when: { infra_provider: [y] } }
  - { name: role, path: role, dependsOn: [vx, vy] }
  - { name: explicit, path: explicit, dependsOn: [base, vx] }
`);
    // One vendor: the role depends on it alone, not also on what the skipped vendor stood for.
    assert.deepEqual(select(d, { infra_provider: 'x' }).order, ['base', 'vx<-base', 'role<-vx', 'explicit<-base,vx']);
    assert.deepEqual(select(d, { infra_provider: 'y' }).order, ['base', 'vy<-base', 'role<-vy', 'explicit<-base']);
    // No vendor: what the vendors depended on.
    assert.deepEqual(select(d, { infra_provider: 'z' }).order, ['base', 'role<-base', 'explicit<-base']);
  });

  it('reproduces the dependency chains of spec 001 with the matrix-example catalog', () => {
    assert.deepEqual(select(matrix, { role: 'env', infra_provider: 'aws', dns_provider: 'route53' }).order, [
      'bootstrap',
      'secrets<-bootstrap',
      'platform<-secrets',
      'dns<-platform',
      'platform-config<-dns',
      'aws<-platform-config',
      'env<-aws',
      'env-auth<-env',
      'env-auth-config<-env-auth',
      'env-app<-env-auth-config',
      'env-observability-agent<-platform-config',
    ]);
    assert.deepEqual(select(matrix, { role: 'tooling', infra_provider: 'openstack' }).order, [
      'bootstrap',
      'secrets<-bootstrap',
      'platform<-secrets',
      'dns<-platform',
      'platform-config<-dns',
      'talos<-platform-config',
      'cc<-talos',
      'cc-config<-cc',
      'cc-routes<-cc-config',
      'cc-observability<-cc-config',
      'cc-observability-routes<-cc-observability',
    ]);
    assert.deepEqual(select(matrix, { role: 'env', infra_provider: 'digitalocean' }).order.slice(0, 7), [
      'bootstrap',
      'secrets<-bootstrap',
      'platform<-secrets',
      'dns<-platform',
      'platform-config<-dns',
      'env<-platform-config',
      'env-auth<-env',
    ]);
  });
});

describe('conditionHolds, expandLayerPath', () => {
  it('needs every attribute a condition names to match, and a value for it', () => {
    assert.equal(conditionHolds(undefined, {}), true);
    assert.equal(conditionHolds({ role: ['env'] }, {}), false);
    assert.equal(conditionHolds({ role: ['env'], self_hosted: true }, { role: 'env', self_hosted: true }), true);
    assert.equal(conditionHolds({ role: ['env'], self_hosted: true }, { role: 'env', self_hosted: false }), false);
  });

  it("puts the cluster's values into a layer path", () => {
    assert.equal(expandLayerPath('./dns/{dns_provider}/', { dns_provider: 'route53' }), 'dns/route53');
    assert.equal(expandLayerPath('vendors/{infra_provider}-{role}', { infra_provider: 'aws', role: 'env' }), 'vendors/aws-env');
    assert.throws(() => expandLayerPath('dns/{dns_provider}', {}), /uses \{dns_provider\}, which this cluster has no value for/);
  });
});
