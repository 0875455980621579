import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { platformDir } from '../package-paths.js';
import { parsePlatformDescriptor } from './platform-descriptor.js';

const HEADER = 'apiVersion: gitops-scaffolder.io/v1alpha1\nkind: Platform\n';

/** Asserts that parsing fails with a ValidationError whose message matches `message`; returns its issues. */
function rejects(text: string, message: RegExp): ValidationError {
  let caught: unknown;
  try {
    parsePlatformDescriptor(text);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ValidationError, `expected a ValidationError, got ${String(caught)}`);
  assert.match(caught.message, message);
  return caught;
}

const credential = (name: string, keys: string, extra = '') => `  - name: ${name}\n    namespace: database\n    layer: database\n${extra}    keys:\n${keys}`;

describe('parsePlatformDescriptor', () => {
  it('reads the shipped scaffold.yaml: five credentials, defaults filled in', () => {
    const descriptor = parsePlatformDescriptor(readFileSync(join(platformDir(), 'scaffold.yaml'), 'utf8'));
    assert.deepEqual(
      descriptor.credentials.map((c) => `${c.layer}:${c.namespace}/${c.name}`),
      [
        'database:database/postgresql-credentials',
        'database:database/rabbitmq-credentials',
        'apps:tcr/tcr-database',
        'apps:tcr/registry-pull-secret',
        'cert-manager-config:flux-system/flux-notification-address',
      ],
    );
    assert.deepEqual(descriptor.credentials[1]!.keys['rabbitmq-erlang-cookie'], { generate: 'alphanumeric', length: 64 });
    assert.deepEqual(descriptor.credentials[2]!.keys.DATABASE_PASSWORD, { sameAs: 'database/postgresql-credentials/password' });
    // Supplied by the caller or not written: never a generated registry password.
    assert.deepEqual(descriptor.credentials[3]!.keys['.dockerconfigjson'], { supplied: 'registry-auth', registry: 'ghcr.io' });
  });

  it('treats a missing descriptor as no credentials', () => {
    assert.deepEqual(parsePlatformDescriptor(undefined).credentials, []);
  });

  it('defaults a password to 32 characters and the type to Opaque', () => {
    const descriptor = parsePlatformDescriptor(`${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n')}`);
    assert.deepEqual(descriptor.credentials[0]!.keys.password, { generate: 'password', length: 32 });
    assert.equal(descriptor.credentials[0]!.type, 'Opaque');
  });

  it('rejects a credential listed twice', () => {
    const keys = '      password: { generate: password }\n';
    rejects(`${HEADER}credentials:\n${credential('pg', keys)}\n${credential('pg', keys)}`, /^scaffold\.yaml: credential database\/pg is listed twice$/);
  });

  it('rejects sameAs naming a credential that does not exist, naming the key', () => {
    const error = rejects(
      `${HEADER}credentials:\n${credential('app', '      DATABASE_PASSWORD: { sameAs: database/missing/password }\n')}`,
      /sameAs database\/missing\/password must name a generated key of another credential/,
    );
    assert.equal(error.issues[0]!.field, 'scaffold.yaml.credentials.database/app.DATABASE_PASSWORD');
  });

  it('rejects sameAs naming a key the other credential does not have', () => {
    rejects(
      `${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n')}\n${credential('app', '      p: { sameAs: database/pg/other }\n')}`,
      /sameAs database\/pg\/other must name a generated key/,
    );
  });

  it('rejects sameAs pointing at another sameAs (no chains)', () => {
    rejects(
      `${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n')}\n${credential('a', '      p: { sameAs: database/pg/password }\n')}\n${credential('b', '      p: { sameAs: database/a/p }\n')}`,
      /sameAs database\/a\/p must name a generated key/,
    );
  });

  it('has no way to generate a registry credential, nor to copy a supplied one', () => {
    // The old form: a random password the registry never issued, sent with every pull.
    rejects(
      `${HEADER}credentials:\n${credential('pull', '      .dockerconfigjson: { generate: dockerconfigjson, registry: ghcr.io, username: tcr-pull }\n')}`,
      /dockerconfigjson/,
    );
    rejects(
      `${HEADER}credentials:\n${credential('pull', '      .dockerconfigjson: { supplied: registry-auth, registry: ghcr.io }\n')}\n${credential('b', '      p: { sameAs: database/pull/.dockerconfigjson }\n')}`,
      /sameAs database\/pull\/\.dockerconfigjson must name a generated key/,
    );
  });

  it('rejects an unknown field, naming it (a typo must not pass silently)', () => {
    const error = rejects(
      `${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n', '    typ: Opaque\n')}`,
      /unknown field\(s\): typ/,
    );
    assert.equal(error.issues[0]!.field, 'scaffold.yaml.credentials.0');
    rejects(`${HEADER}credential: []\n`, /^scaffold\.yaml: unknown field\(s\): credential$/);
  });

  it('rejects an unknown generator and a password too short to be one', () => {
    rejects(`${HEADER}credentials:\n${credential('pg', '      password: { generate: uuid }\n')}`, /scaffold\.yaml\.credentials\.0\.keys\.password/);
    rejects(
      `${HEADER}credentials:\n${credential('pg', '      password: { generate: password, length: 8 }\n')}`,
      /scaffold\.yaml\.credentials\.0\.keys\.password/,
    );
  });

  it('rejects a credential name that is not a DNS label and a credential with no keys', () => {
    rejects(
      `${HEADER}credentials:\n  - name: ../pg\n    namespace: database\n    layer: database\n    keys: { p: { generate: password } }\n`,
      /scaffold\.yaml\.credentials\.0\.name: must be a DNS-1123 label/,
    );
    rejects(
      `${HEADER}credentials:\n  - name: pg\n    namespace: database\n    layer: database\n    keys: {}\n`,
      /scaffold\.yaml\.credentials\.0\.keys: must list at least one key/,
    );
  });

  it('rejects the wrong apiVersion or kind, and malformed YAML', () => {
    rejects('apiVersion: v1\nkind: Platform\n', /scaffold\.yaml\.apiVersion/);
    rejects('apiVersion: gitops-scaffolder.io/v1alpha1\nkind: Cluster\n', /scaffold\.yaml\.kind/);
    rejects(`${HEADER}credentials: [\n`, /^scaffold\.yaml: invalid YAML/);
  });

  it('reads the matrix-example catalog: attributes, defaults filled in, the cluster-secrets credential', () => {
    const descriptor = parsePlatformDescriptor(readFileSync(join(platformDir('matrix-example'), 'scaffold.yaml'), 'utf8'));
    assert.deepEqual(descriptor.attributes?.infra_provider?.selfHosted, ['proxmox', 'openstack']);
    assert.equal(descriptor.layers?.length, 19);
    assert.deepEqual(
      descriptor.layers?.slice(0, 3).map((l) => `${l.name}<-${l.dependsOn.join(',')}`),
      ['bootstrap<-', 'secrets<-bootstrap', 'platform<-secrets'],
    );
    assert.deepEqual(descriptor.layers?.find((l) => l.name === 'env-data')?.when, { role: ['env'], self_hosted: true });
    assert.deepEqual(descriptor.layers?.find((l) => l.name === 'cc')?.dependsOn, ['talos', 'aws', 'gcp']);
    assert.deepEqual(descriptor.layerDefaults.sourceRef, { kind: 'GitRepository', name: 'flux-system', namespace: 'flux-system' });
    assert.deepEqual(
      descriptor.credentials.map((c) => `${c.layer}:${c.namespace}/${c.name}`),
      ['secrets:flux-system/cluster-secrets', 'secrets:flux-system/flux-notification-address'],
    );
    assert.equal(descriptor.fluxInstance?.enabled, false);
    assert.deepEqual(descriptor.fluxInstance?.sync, { pullSecret: 'flux-system' });
    // What verify needs and the tree cannot show.
    assert.equal(descriptor.targetFlux, '2.9');
    assert.deepEqual(descriptor.bootstrap, {
      layer: 'bootstrap',
      cni: ['cilium'],
      crds: ['gateway.networking.k8s.io/Gateway', 'gateway.networking.k8s.io/HTTPRoute', 'bitnami.com/SealedSecret'],
    });
    assert.deepEqual(descriptor.charts?.find((c) => c.chart === 'cert-manager')?.services, [
      { name: '{release}', labels: { 'app.kubernetes.io/name': 'cert-manager', 'app.kubernetes.io/component': 'controller' }, ports: ['http-metrics'] },
    ]);
  });

  it('records per pinned release the tag read, the options it accepts and the CRDs its controller needs, and per infrastructure its CNI and managed CRDs', () => {
    const descriptor = parsePlatformDescriptor(readFileSync(join(platformDir('matrix-example'), 'scaffold.yaml'), 'utf8'));
    const externalDns = descriptor.charts?.find((c) => c.chart === 'external-dns')?.releases ?? [];
    assert.deepEqual(
      externalDns.map((r) => `${r.version} ${r.checked}`),
      ['1.21.1 kubernetes-sigs/external-dns@external-dns-helm-chart-1.21.1', '1.16.1 kubernetes-sigs/external-dns@external-dns-helm-chart-1.16.1'],
    );
    const providers = (version: string) => externalDns.find((r) => r.version === version)!.options.find((o) => o.name === 'provider')!.allowed;
    assert.ok(!providers('1.21.1').includes('digitalocean') && !providers('1.21.1').includes('designate') && providers('1.21.1').includes('webhook'));
    assert.ok(providers('1.16.1').includes('designate'));
    assert.ok(descriptor.charts?.find((c) => c.chart === 'cilium')?.releases[0]?.requires.includes('gateway.networking.k8s.io/TLSRoute'));
    assert.deepEqual(descriptor.artifacts?.find((a) => a.kustomization === 'gateway-api-tlsroute')?.crds, ['gateway.networking.k8s.io/TLSRoute']);
    const platform = descriptor.attributes?.infra_provider?.platform ?? {};
    assert.deepEqual(Object.keys(platform).sort(), ['aws', 'digitalocean', 'gcp', 'openstack', 'proxmox']);
    assert.ok(Object.values(platform).every((p) => p.cni === 'cluster'));
    assert.ok(platform.gcp!.crds.includes('gateway.networking.k8s.io/Gateway'));
  });

  it('refuses release facts and infrastructure rows it cannot trust', () => {
    const chart = (release: string) => `${HEADER}charts:\n  - chart: external-dns\n    releases:\n${release}`;
    rejects(chart('      - { version: 1.21.1, checked: external-dns-1.21.1 }\n'), /checked: must be owner\/repo@tag/);
    rejects(chart('      - { version: 1.21.1, checked: a/b@t }\n      - { version: 1.21.1, checked: a/b@u }\n'), /must not list a version twice/);
    rejects(
      chart('      - { version: 1.21.1, checked: a/b@t, options: [{ name: provider, values: ["provider..name"], allowed: [aws] }] }\n'),
      /must be a dotted values path/,
    );
    rejects(chart('      - { version: 1.21.1, checked: a/b@t, requires: [TLSRoute] }\n'), /must be group\/Kind/);
    const infra = (row: string) => `${HEADER}attributes:\n  infra_provider:\n    values: [aws, gcp]\n    platform:\n${row}`;
    rejects(
      infra('      azure: { cni: cluster }\n'),
      /scaffold\.yaml\.attributes\.infra_provider\.platform\.azure: "azure" is not one of the values \(aws, gcp\)/,
    );
    rejects(infra('      aws: { cni: flux }\n'), /must be cluster \(there before Flux\) or bootstrap/);
    assert.equal(parsePlatformDescriptor(infra('      aws: {}\n')).attributes?.infra_provider?.platform.aws?.cni, 'cluster');
  });

  it('fills in the layer defaults and leaves the catalog out when there is none', () => {
    const descriptor = parsePlatformDescriptor(HEADER);
    assert.equal(descriptor.layers, undefined);
    assert.deepEqual(descriptor.layerDefaults, {
      interval: '10m',
      retryInterval: '1m',
      timeout: '5m',
      sourceRef: { kind: 'GitRepository', name: 'flux-system', namespace: 'flux-system' },
      substituteFrom: [{ kind: 'ConfigMap', name: 'cluster-config' }],
    });
  });
});

describe('parsePlatformDescriptor: the layer catalog', () => {
  const ATTRS = 'attributes:\n  role: { values: [tooling, env], default: env }\n  dns_provider: { values: [route53, cloudflare] }\n';
  const catalog = (layers: string, extra = '') => `${HEADER}${ATTRS}${extra}layers:\n${layers}`;
  const cases: [string, string, RegExp][] = [
    ['a layer listed twice', '  - { name: a, path: a }\n  - { name: a, path: b }\n', /scaffold\.yaml\.layers\.a: is listed twice/],
    ['both path and overlay', '  - { name: a, path: a, overlay: a }\n', /scaffold\.yaml\.layers\.a: must set exactly one of path .* and overlay/],
    ['neither path nor overlay', '  - { name: a }\n', /must set exactly one of path/],
    ['a dependsOn that is no layer', '  - { name: a, path: a, dependsOn: [b] }\n', /scaffold\.yaml\.layers\.a\.dependsOn: "b" is not a layer of the catalog/],
    [
      'a dependsOn cycle',
      '  - { name: a, path: a, dependsOn: [c] }\n  - { name: b, path: b, dependsOn: [a] }\n  - { name: c, path: c, dependsOn: [b] }\n',
      /scaffold\.yaml\.layers: dependsOn has a cycle: a -> c -> b -> a/,
    ],
    [
      'a condition value the attribute does not know',
      '  - { name: a, path: a, when: { role: [ops] } }\n',
      /scaffold\.yaml\.layers\.a\.when\.role: "ops" is not one of attributes\.role\.values \(tooling, env\)/,
    ],
    [
      'a condition on an undeclared attribute',
      '  - { name: a, path: a, when: { infra_provider: [aws] } }\n',
      /scaffold\.yaml\.layers\.a\.when\.infra_provider: attributes\.infra_provider is not declared/,
    ],
    ['self_hosted without infra providers', '  - { name: a, path: a, when: { self_hosted: true } }\n', /when\.self_hosted: needs attributes\.infra_provider/],
    [
      'an unknown placeholder',
      '  - { name: a, path: "dns/{provider}" }\n',
      /scaffold\.yaml\.layers\.a\.path: \{provider\} is not a placeholder: use \{role\}, \{infra_provider\}, \{dns_provider\}/,
    ],
    ['a placeholder of an undeclared attribute', '  - { name: a, path: "{infra_provider}" }\n', /\{infra_provider\} needs attributes\.infra_provider/],
    ['a path leaving the repository', '  - { name: a, path: ../other }\n', /scaffold\.yaml\.layers\.a\.path: "\.\.\/other" escapes the repository/],
    ['a path under clusters/', '  - { name: a, path: clusters/shared }\n', /must be a shared Kustomize root outside clusters\//],
    ['a reserved name', '  - { name: cluster-config, path: a }\n', /"cluster-config" is reserved/],
    ['wait: false without healthChecks', '  - { name: a, path: a, wait: false }\n', /layers\.a\.wait: false without healthChecks/],
    ['a bad duration', '  - { name: a, path: a, timeout: 5 minutes }\n', /layers\.0\.timeout: must be a duration such as 30s, 5m or 1h30m/],
    ['a typo in a layer field', '  - { name: a, path: a, dependOn: [b] }\n', /scaffold\.yaml\.layers\.0: unknown field\(s\): dependOn/],
    [
      'a Secret source nothing creates',
      '  - { name: a, path: a, substituteFrom: [{ kind: Secret, name: cluster-secrets }] }\n',
      /layers\.a\.substituteFrom: Secret cluster-secrets is not a credential of scaffold\.yaml in namespace flux-system/,
    ],
    [
      'a layer substituting from a Secret sealed by a layer it does not wait for',
      '  - { name: s, overlay: secrets }\n  - { name: a, path: a, substituteFrom: [{ kind: Secret, name: cluster-secrets }] }\ncredentials:\n  - { name: cluster-secrets, namespace: flux-system, layer: secrets, keys: { k: { generate: password } } }\n',
      /layers\.a\.substituteFrom: Secret cluster-secrets is sealed by layer s, which a does not depend on/,
    ],
  ];
  for (const [title, layers, message] of cases) {
    it(`rejects ${title}`, () => {
      rejects(catalog(layers), message);
    });
  }

  it('rejects an attribute default or config value that is not a value, and a config key two attributes set', () => {
    rejects(
      `${HEADER}attributes:\n  role: { values: [a], default: b }\nlayers:\n  - { name: x, path: x }\n`,
      /attributes\.role\.default: "b" is not one of the values \(a\)/,
    );
    rejects(
      `${HEADER}attributes:\n  infra_provider: { values: [a], selfHosted: [b] }\n`,
      /attributes\.infra_provider\.selfHosted: "b" is not one of the values/,
    );
    rejects(
      `${HEADER}attributes:\n  role: { values: [a], config: { a: { storage_class: x } } }\n  infra_provider: { values: [p], config: { p: { storage_class: y } } }\n`,
      /attributes\.infra_provider\.config\.p\.storage_class: is also set by attributes\.role\.config/,
    );
    rejects(`${HEADER}attributes:\n  role: { values: [a], config: { a: { cluster_name: x } } }\n`, /is set by the generator itself/);
  });

  it('rejects a credential of a catalog platform that has no per-cluster directory to go to, and a flux credential outside flux-system', () => {
    rejects(
      catalog('  - { name: a, path: a }\n', `credentials:\n${credential('pg', '      password: { generate: password }\n')}\n`),
      /credentials\.database\/pg\.layer: "database" is neither the overlay of a catalog layer \(there are none\) nor flux/,
    );
    rejects(
      `${HEADER}credentials:\n  - name: cluster-secrets\n    namespace: default\n    layer: flux\n    keys: { p: { generate: password } }\n`,
      /credentials\.default\/cluster-secrets\.layer: layer flux holds Flux's own Secrets, .*the namespace must be flux-system/,
    );
  });

  it('accepts overlay layers, a Secret source declared as a flux credential, and an optional external one', () => {
    const descriptor = parsePlatformDescriptor(
      catalog(
        '  - { name: apps, overlay: apps, substituteFrom: [{ kind: Secret, name: cluster-secrets }, { kind: Secret, name: external, optional: true }] }\n',
        'credentials:\n  - name: cluster-secrets\n    namespace: flux-system\n    layer: flux\n    keys: { p: { generate: password } }\n  - name: app\n    namespace: tcr\n    layer: apps\n    keys: { p: { generate: password } }\n',
      ),
    );
    assert.equal(descriptor.layers?.[0]?.overlay, 'apps');
  });

  it('rejects a FluxInstance with credentials in its sync URL or an unknown component', () => {
    rejects(`${HEADER}fluxInstance:\n  sync: { url: "https://user:token@git.example.net/x.git" }\n`, /fluxInstance\.sync\.url: must not carry credentials/);
    rejects(`${HEADER}fluxInstance:\n  components: [source-controller, image-controller]\n`, /fluxInstance\.components\.1/);
  });
});
