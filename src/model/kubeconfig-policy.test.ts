/**
 * The kubeconfig policy against the real consumer: every text is also fed to
 * @kubernetes/client-node, once raw (`loadFromString`, to show what a loader
 * makes of it: the attack class is real) and once through the product's edge
 * (`loadKubeConfig`, which hands client-node only the rebuilt object).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import fc from 'fast-check';
import { Document, isMap, isPair, isScalar, isSeq, stringify, visit, type Scalar, type YAMLMap, type YAMLSeq } from 'yaml';
import { ValidationError } from '../errors.js';
import { loadKubeConfig } from '../kubernetes/kube-config.js';
import { inlineKubeconfigText, kubeconfigIssues, readKubeconfig } from './kubeconfig-policy.js';

const CA = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==';
const SECRET = 'SECRET-host-file-content';

/** What a loaded KubeConfig may hold: inline data only, servers on the network. */
function assertOnlyInlineData(kc: KubeConfig): void {
  for (const user of kc.users) {
    assert.deepEqual(
      Object.keys(user).filter((k) => !['name', 'token', 'certData', 'keyData'].includes(k)),
      [],
      `user ${user.name} has only inline fields`,
    );
    assert.equal(user.exec, undefined);
    assert.equal(user.authProvider, undefined);
    assert.equal(user.certFile, undefined);
    assert.equal(user.keyFile, undefined);
    assert.notEqual(user.token, SECRET, 'no token was read from a host file');
  }
  for (const cluster of kc.clusters) {
    assert.deepEqual(
      Object.keys(cluster).filter((k) => !['name', 'server', 'caData', 'tlsServerName', 'skipTLSVerify'].includes(k)),
      [],
      `cluster ${cluster.name} has only inline fields`,
    );
    assert.equal(cluster.caFile, undefined);
    assert.equal(cluster.proxyUrl, undefined);
    assert.match(cluster.server, /^(https:\/\/|http:\/\/(127\.0\.0\.1|localhost|\[::1\])([:/]|$))/);
  }
}

/** The product's edge: a ValidationError, or a KubeConfig holding inline data only. */
function throughTheEdge(text: string): { refused: ValidationError } | { kc: KubeConfig } {
  try {
    const kc = loadKubeConfig({ kind: 'inline', yaml: text });
    assertOnlyInlineData(kc);
    return { kc };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { refused: error };
  }
}

function rawLoad(text: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return kc;
}

const BENIGN_HEAD = ['apiVersion: v1', 'kind: Config'];
const BENIGN_CLUSTER = '{name: c, cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: ' + CA + '}}';
const BENIGN_TAIL = ['contexts: [{name: ctx, context: {cluster: c, user: evil}}]', 'current-context: ctx', ''];

describe('the kubeconfig policy', () => {
  let dir: string;
  let hostFile: string;
  let marker: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubeconfig-policy-'));
    hostFile = join(dir, 'host-secret');
    marker = join(dir, 'exec-ran');
    await writeFile(hostFile, SECRET);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Payloads a loader would act on: a command, a plugin, a host file, a local socket, a proxy. */
  const userPayloads = () => ({
    exec: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', `touch ${marker}`] } },
    'auth-provider': { 'auth-provider': { name: 'oidc', config: { 'client-id': 'x', 'id-token': 'y' } } },
    'token-file': { 'token-file': hostFile },
    tokenFile: { tokenFile: hostFile },
    'client-certificate': { 'client-certificate': hostFile, 'client-key': hostFile },
  });
  const clusterPayloads = () => ({
    'certificate-authority': { server: 'https://10.0.0.1:6443', 'certificate-authority': hostFile },
    'file-server': { server: `file://${hostFile}` },
    'unix-server': { server: 'unix:///var/run/docker.sock' },
    'proxy-url': { server: 'https://10.0.0.1:6443', 'proxy-url': 'http://169.254.169.254:80' },
  });

  /** What the raw loader made of the payload, proving it would have acted on it. */
  function rawShows(kc: KubeConfig, payload: string): void {
    const user = kc.users.find((u) => u.name === 'evil');
    const cluster = kc.clusters.find((c) => c.name === 'evil');
    switch (payload) {
      case 'exec':
        return assert.ok(user?.exec?.command === 'sh', 'the raw loader resolved the alias into an exec');
      case 'auth-provider':
        return assert.ok(user?.authProvider?.name === 'oidc');
      case 'token-file':
        return assert.equal(user?.token, SECRET, 'the raw loader read the host file into the Bearer token');
      case 'tokenFile':
        // client-node 1.4 reads `token-file`; `tokenFile` is kubectl's spelling and must not survive either.
        return assert.ok(user !== undefined);
      case 'client-certificate':
        return assert.equal(user?.certFile, hostFile);
      case 'certificate-authority':
        return assert.equal(cluster?.caFile, hostFile);
      case 'file-server':
      case 'unix-server':
        return assert.match(cluster?.server ?? '', /^(file|unix):/);
      case 'proxy-url':
        return assert.equal(cluster?.proxyUrl, 'http://169.254.169.254:80');
    }
  }

  /**
   * A kubeconfig whose dangerous part sits under an anchor where a policy
   * walking the tree would not look, and is pulled in by an alias or a merge key.
   */
  function hidden(
    kind: 'user' | 'cluster',
    payload: object,
    site: 'preferences' | 'extensions' | 'cluster-extensions',
    how: 'entry' | 'body' | 'merge' | 'list',
  ): string {
    const body = JSON.stringify(payload);
    const bodyKey = kind === 'user' ? 'user' : 'cluster';
    const anchored = how === 'entry' ? `{name: evil, ${bodyKey}: ${body}}` : how === 'list' ? `[{name: evil, ${bodyKey}: ${body}}]` : body;
    const use = how === 'entry' ? '[*a]' : how === 'list' ? '*a' : how === 'body' ? `[{name: evil, ${bodyKey}: *a}]` : `[{name: evil, ${bodyKey}: {<<: *a}}]`;
    const lines = [...BENIGN_HEAD];
    if (site === 'preferences') lines.push(`preferences: {x: &a ${anchored}}`);
    if (site === 'extensions') lines.push('extensions:', `- name: x`, `  extension: &a ${anchored}`);
    const cluster =
      site === 'cluster-extensions'
        ? `{name: c, cluster: {server: "https://10.0.0.1:6443", extensions: [{name: x, extension: &a ${anchored}}]}}`
        : BENIGN_CLUSTER;
    lines.push(kind === 'user' ? `clusters: [${cluster}]` : `clusters: ${use}`);
    lines.push(kind === 'user' ? `users: ${use}` : 'users: [{name: evil, user: {token: t}}]');
    if (kind === 'cluster') return [...lines, 'contexts: [{name: ctx, context: {cluster: evil, user: evil}}]', 'current-context: ctx', ''].join('\n');
    return [...lines, ...BENIGN_TAIL].join('\n');
  }

  it('refuses an exec hidden behind a YAML alias (anchor under preferences or extensions), which client-node would run', () => {
    for (const site of ['preferences', 'extensions'] as const) {
      const text = hidden('user', userPayloads().exec, site, 'entry');
      rawShows(rawLoad(text), 'exec');
      const issues = kubeconfigIssues(text, 'kubeconfig.inline');
      assert.ok(issues.length > 0 && issues.every((i) => i.field === 'kubeconfig.inline'), JSON.stringify(issues));
      assert.ok(
        issues.some((i) => /YAML alias \(\*name\) at users\[0\]/.test(i.message)),
        JSON.stringify(issues),
      );
      assert.ok('refused' in throughTheEdge(text));
    }
    assert.equal(existsSync(marker), false, 'no command ran');
  });

  it('refuses tokenFile, certificate-authority and client-certificate paths hidden behind an alias or a merge key, naming the field', () => {
    const cases: [string, string, RegExp][] = [
      ['tokenFile', hidden('user', userPayloads().tokenFile, 'extensions', 'body'), /YAML alias \(\*name\) at users\[0\]\.user /],
      ['token-file', hidden('user', userPayloads()['token-file'], 'preferences', 'merge'), /YAML merge key \(<<\) at users\[0\]\.user /],
      ['client-certificate', hidden('user', userPayloads()['client-certificate'], 'cluster-extensions', 'merge'), /YAML merge key \(<<\) at users\[0\]\.user /],
      [
        'certificate-authority',
        hidden('cluster', clusterPayloads()['certificate-authority'], 'preferences', 'body'),
        /YAML alias \(\*name\) at clusters\[0\]\.cluster /,
      ],
    ];
    for (const [payload, text, pattern] of cases) {
      rawShows(rawLoad(text), payload);
      const issues = kubeconfigIssues(text, 'kubeconfig');
      assert.ok(
        issues.some((i) => i.field === 'kubeconfig' && pattern.test(i.message)),
        `${payload}: ${JSON.stringify(issues)}`,
      );
    }
  });

  it('refuses a file://, unix:// or non-loopback http:// server, naming the field', () => {
    const server = (url: string, skip = false) =>
      [...BENIGN_HEAD, `clusters: [{name: c, cluster: {server: "${url}"${skip ? ', insecure-skip-tls-verify: true' : ''}}}]`, ''].join('\n');
    for (const url of [`file://${hostFile}`, 'unix:///var/run/docker.sock', 'http://10.0.0.1:8080', 'ftp://10.0.0.1/']) {
      assert.deepEqual(
        kubeconfigIssues(server(url, true), 'kubeconfig.inline'),
        [{ field: 'kubeconfig.inline', message: 'clusters[0].cluster.server must be an https:// URL (http:// only to a loopback address)' }],
        url,
      );
    }
    assert.deepEqual(kubeconfigIssues(server('http://127.0.0.1:8080', true), 'k'), []);
    assert.match(kubeconfigIssues(server('http://127.0.0.1:8080'), 'k')[0]?.message ?? '', /only accepts with insecure-skip-tls-verify: true/);
    assert.match(kubeconfigIssues(server('https://admin:pw@10.0.0.1'), 'k')[0]?.message ?? '', /must not embed credentials/);
  });

  it('refuses a server URL with a user or a password alone in it', () => {
    const server = (url: string, skip = false) =>
      [...BENIGN_HEAD, `clusters: [{name: c, cluster: {server: "${url}"${skip ? ', insecure-skip-tls-verify: true' : ''}}}]`, ''].join('\n');
    for (const [url, skip] of [
      ['https://:pw@10.0.0.1', false],
      ['https://admin@10.0.0.1', false],
      ['https://admin:@10.0.0.1:6443', false],
      ['http://:pw@127.0.0.1:8080', true],
    ] as const) {
      assert.deepEqual(
        kubeconfigIssues(server(url, skip), 'kubeconfig.inline'),
        [{ field: 'kubeconfig.inline', message: 'clusters[0].cluster.server must not embed credentials; put a token in users[].user.token' }],
        url,
      );
      assert.ok('refused' in throughTheEdge(server(url, skip)), url);
    }
  });

  it('takes http:// only to loopback itself, not to a host name that starts with one', () => {
    const server = (url: string) => [...BENIGN_HEAD, `clusters: [{name: c, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]`, ''].join('\n');
    for (const url of ['http://localhost.example.net:8080', 'http://localhost-proxy:8080', 'http://127.0.0.1.example.net:8080', 'http://localhost.:8080']) {
      assert.deepEqual(
        kubeconfigIssues(server(url), 'kubeconfig.inline'),
        [{ field: 'kubeconfig.inline', message: 'clusters[0].cluster.server must be an https:// URL (http:// only to a loopback address)' }],
        url,
      );
    }
    for (const url of ['http://localhost:8080', 'http://[::1]:8080']) assert.deepEqual(kubeconfigIssues(server(url), 'k'), [], url);
  });

  it('refuses custom tags, anchors and merge keys even where nothing aliases them', () => {
    for (const text of [
      'users: !!set {a: null}\n',
      'preferences: &p {}\n',
      'users: [{name: u, user: !custom {token: t}}]\n',
      'preferences: {<<: {a: 1}}\n',
      '%YAML 1.1\n---\nusers: []\n',
    ]) {
      const issues = kubeconfigIssues(text, 'kubeconfig');
      assert.ok(issues.length > 0, text);
    }
  });

  it('refuses exec, auth-provider, file paths and basic auth written out in full, by field', () => {
    const user = (body: string) => `users: [{name: u, user: {${body}}}]\n`;
    assert.match(kubeconfigIssues(user('exec: {command: sh}'), 'k')[0]?.message ?? '', /users\[0\]\.user\.exec runs a command/);
    assert.match(kubeconfigIssues(user('tokenFile: /etc/hostname'), 'k')[0]?.message ?? '', /users\[0\]\.user\.tokenFile reads a file/);
    assert.match(kubeconfigIssues(user('token-file: /etc/hostname'), 'k')[0]?.message ?? '', /users\[0\]\.user\.token-file reads a file/);
    assert.match(kubeconfigIssues(user('username: a, password: b'), 'k')[0]?.message ?? '', /users\[0\]\.user\.username is basic authentication/);
  });

  it('rebuilds exactly the allow-listed fields and drops preferences and extensions', () => {
    const text = [
      ...BENIGN_HEAD,
      'preferences: {colors: true}',
      'extensions: [{name: x, extension: {a: b}}]',
      `clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443/", certificate-authority-data: ${CA}, tls-server-name: api.example.net, extensions: [{name: y, extension: {}}]}}]`,
      'users: [{name: u, user: {token: t0k3n, client-certificate-data: Y2VydA==, client-key-data: a2V5}}]',
      'contexts: [{name: ctx, context: {cluster: c, user: u, namespace: ns}}]',
      'current-context: ctx',
      '',
    ].join('\n');
    const reading = readKubeconfig(text, 'kubeconfig');
    assert.ok(reading.ok);
    assert.deepEqual(reading.kubeconfig, {
      clusters: [{ name: 'c', server: 'https://10.0.0.1:6443/', skipTLSVerify: false, caData: CA, tlsServerName: 'api.example.net' }],
      users: [{ name: 'u', token: 't0k3n', certData: 'Y2VydA==', keyData: 'a2V5' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u', namespace: 'ns' }],
      currentContext: 'ctx',
    });
    // What the Job's Secret holds reads back to the same object.
    const again = readKubeconfig(inlineKubeconfigText(reading.kubeconfig), 'kubeconfig');
    assert.deepEqual(again.ok && again.kubeconfig, reading.kubeconfig);
  });

  // ---- properties: generated kubeconfigs against the real loader --------------------------------

  const entryName = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
  const base64 = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64'));
  const token = fc.stringMatching(/^[A-Za-z0-9._-]{1,48}$/);
  const server = fc
    .tuple(
      fc.constantFrom('https://10.0.0.1', 'https://api.example.net', 'https://[fd00::1]', 'http://127.0.0.1'),
      fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
      fc.constantFrom('', '/', '/k8s/clusters/c-1'),
    )
    .map(([origin, port, path]) => `${origin}${port === undefined ? '' : `:${port}`}${path}`);

  /** A valid kubeconfig with one to three of each entry, as a plain object. */
  const benign = fc
    .record({
      names: fc.uniqueArray(entryName, { minLength: 1, maxLength: 3 }),
      servers: fc.array(server, { minLength: 3, maxLength: 3 }),
      cas: fc.array(fc.option(base64, { nil: undefined }), { minLength: 3, maxLength: 3 }),
      tokens: fc.array(token, { minLength: 3, maxLength: 3 }),
      certs: fc.option(fc.tuple(base64, base64), { nil: undefined }),
      current: fc.nat(),
      extras: fc.boolean(),
    })
    .map(({ names, servers, cas, tokens, certs, current, extras }) => ({
      apiVersion: 'v1',
      kind: 'Config',
      ...(extras ? { preferences: { colors: true }, extensions: [{ name: 'x', extension: { a: 'b' } }] } : {}),
      clusters: names.map((name, i) => ({
        name,
        cluster: {
          server: servers[i]!,
          ...(cas[i] ? { 'certificate-authority-data': cas[i] } : {}),
          ...(servers[i]!.startsWith('http:') ? { 'insecure-skip-tls-verify': true } : {}),
        },
      })),
      users: names.map((name, i) => ({
        name,
        user: { token: tokens[i]!, ...(certs && i === 0 ? { 'client-certificate-data': certs[0], 'client-key-data': certs[1] } : {}) },
      })),
      contexts: names.map((name) => ({ name, context: { cluster: name, user: name, ...(extras ? { namespace: 'default' } : {}) } })),
      'current-context': names[current % names.length]!,
    }));

  it('round-trips every benign kubeconfig: server, token and CA data reach the client as the raw loader reads them', () => {
    fc.assert(
      fc.property(benign, fc.boolean(), (config, asJson) => {
        const text = asJson ? JSON.stringify(config) : stringify(config);
        const edge = throughTheEdge(text);
        assert.ok('kc' in edge, 'refused' in edge ? edge.refused.message : '');
        const raw = rawLoad(text);
        assert.deepEqual(
          edge.kc.clusters.map((c) => [c.name, c.server, c.caData, c.skipTLSVerify]),
          raw.clusters.map((c) => [c.name, c.server, c.caData, c.skipTLSVerify]),
        );
        assert.deepEqual(
          edge.kc.users.map((u) => [u.name, u.token, u.certData, u.keyData]),
          raw.users.map((u) => [u.name, u.token, u.certData ?? undefined, u.keyData ?? undefined]),
        );
        assert.equal(edge.kc.getCurrentContext(), config['current-context']);
        assert.equal(edge.kc.getCurrentUser()?.token, raw.getCurrentUser()?.token);
      }),
      { numRuns: 150 },
    );
  });

  it('no payload hidden behind an alias or merge key, at any site, reaches the client; the raw loader resolves every one', () => {
    const payload = fc.oneof(
      fc.record({
        kind: fc.constant('user' as const),
        name: fc.constantFrom(...Object.keys(userPayloads())),
        site: fc.constantFrom('preferences' as const, 'extensions' as const, 'cluster-extensions' as const),
      }),
      fc.record({
        kind: fc.constant('cluster' as const),
        name: fc.constantFrom(...Object.keys(clusterPayloads())),
        site: fc.constantFrom('preferences' as const, 'extensions' as const),
      }),
    );
    fc.assert(
      fc.property(payload, fc.constantFrom('entry' as const, 'body' as const, 'merge' as const, 'list' as const), ({ kind, name, site }, how) => {
        const body =
          kind === 'user' ? userPayloads()[name as keyof ReturnType<typeof userPayloads>] : clusterPayloads()[name as keyof ReturnType<typeof clusterPayloads>];
        const text = hidden(kind, body, site, how);
        rawShows(rawLoad(text), name);
        const edge = throughTheEdge(text);
        assert.ok('refused' in edge, 'the edge refused it');
        assert.ok(edge.refused.issues.every((i) => i.field === 'kubeconfig'));
        assert.match(edge.refused.message, /YAML (alias|anchor|merge key)/);
        assert.ok(!edge.refused.message.includes(SECRET));
      }),
      { numRuns: 200 },
    );
    assert.equal(existsSync(marker), false, 'no command ran');
  });

  it('refuses an alias, anchor, merge key or non-core tag placed at any node of a valid kubeconfig', () => {
    const TAGS = [
      '!custom',
      '!include',
      'tag:yaml.org,2002:binary',
      'tag:yaml.org,2002:set',
      'tag:yaml.org,2002:omap',
      'tag:yaml.org,2002:timestamp',
      'tag:yaml.org,2002:merge',
      'tag:yaml.org,2002:python/name:os.system',
    ];
    const mutation = fc.record({
      what: fc.constantFrom('anchor', 'alias', 'merge', 'tag'),
      at: fc.nat(),
      from: fc.nat(),
      tag: fc.constantFrom(...TAGS),
      flow: fc.boolean(),
    });
    fc.assert(
      fc.property(benign, mutation, (config, { what, at, from, tag, flow }) => {
        const doc = new Document(config, { aliasDuplicateObjects: false });
        // Every node in document order, keys included, with the pair or list holding it.
        const nodes: { node: Scalar | YAMLMap | YAMLSeq; parent: unknown; isKey: boolean; ancestors: unknown[] }[] = [];
        visit(doc, (key, node, path) => {
          if (isScalar(node) || isMap(node) || isSeq(node)) {
            if (flow && (isMap(node) || isSeq(node))) node.flow = true;
            nodes.push({ node, parent: path[path.length - 1], isKey: key === 'key', ancestors: [...path] });
          }
        });
        const target = nodes[at % nodes.length]!;
        if (what === 'anchor') target.node.anchor = 'a1';
        else if (what === 'tag') target.node.tag = tag;
        else if (what === 'alias') {
          // An earlier node, not holding the target, anchored and referred to from the target's place.
          const index = at % nodes.length;
          const earlier = nodes.slice(0, index).filter((n) => !target.ancestors.includes(n.node) && !n.isKey);
          fc.pre(earlier.length > 0);
          const source = earlier[from % earlier.length]!;
          const alias = doc.createAlias(source.node, 'a1');
          const parent = target.parent;
          if (isPair(parent)) {
            if (target.isKey) parent.key = alias;
            else parent.value = alias;
          } else if (isSeq(parent)) parent.items[parent.items.indexOf(target.node)] = alias;
          else fc.pre(false);
        } else {
          const maps = nodes.filter((n) => isMap(n.node));
          const into = maps[at % maps.length]!;
          const earlier = maps.filter((n) => n !== into && !into.ancestors.includes(n.node) && !n.ancestors.includes(into.node));
          fc.pre(earlier.length > 0);
          const source = earlier[from % earlier.length]!;
          (into.node as unknown as { items: unknown[] }).items.push(doc.createPair('<<', doc.createAlias(source.node, 'a1')));
        }
        let text: string;
        try {
          text = doc.toString();
        } catch {
          return fc.pre(false);
        }
        const edge = throughTheEdge(text);
        assert.ok('refused' in edge, `accepted:\n${text}`);
        assert.ok(edge.refused.issues.length > 0 && edge.refused.issues.every((i) => i.field === 'kubeconfig'));
      }),
      { numRuns: 300 },
    );
  });
});
