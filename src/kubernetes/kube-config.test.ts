import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
import { readKubeconfig } from '../model/kubeconfig-policy.js';
import { loadKubeConfig } from './kube-config.js';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.SECRET-token-value';

function kubeconfig(overrides: { server?: string; skipTls?: boolean; context?: string; user?: string } = {}): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: target',
    '  cluster:',
    `    server: ${overrides.server ?? 'https://10.0.0.1:6443'}`,
    ...(overrides.skipTls ? ['    insecure-skip-tls-verify: true'] : []),
    '    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
    'users:',
    '- name: admin',
    '  user:',
    `    token: ${TOKEN}`,
    'contexts:',
    '- name: target',
    '  context:',
    '    cluster: target',
    `    user: ${overrides.user ?? 'admin'}`,
    `current-context: ${overrides.context ?? 'target'}`,
    '',
  ].join('\n');
}

function rejectsWithout(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ValidationError);
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes('SECRET-token-value'), `message echoes the token: ${error.message}`);
    return true;
  });
}

describe('loadKubeConfig', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-config-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a file', async () => {
    const path = join(dir, 'ok');
    await writeFile(path, kubeconfig());
    const kc = loadKubeConfig({ kind: 'file', path });
    assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
    assert.equal(kc.getCurrentUser()?.token, TOKEN);
  });

  // A caller's kubeconfig is loaded on the runner's host: anything that runs a
  // command or reads a local file is refused before client-node sees it.
  it('refuses exec, auth-provider and every file reference, by field, and runs nothing', async () => {
    const marker = join(dir, 'exec-ran');
    const cases: [string, string[], RegExp][] = [
      [
        'exec',
        ['    exec:', '      apiVersion: client.authentication.k8s.io/v1', '      command: sh', `      args: ["-c", "touch ${marker}"]`],
        /users\[0\]\.user\.exec runs a command/,
      ],
      [
        'auth-provider',
        ['    auth-provider:', '      name: gcp', '      config:', `        cmd-path: /bin/touch`, `        cmd-args: ${marker}`],
        /auth-provider runs an authentication plugin/,
      ],
      ['tokenFile', ['    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token'], /tokenFile reads a file/],
      ['client-certificate', ['    client-certificate: /etc/gitops-scaffolder/tls.crt'], /client-certificate reads a file/],
      ['client-key', ['    client-key: /etc/gitops-scaffolder/tls.key'], /client-key reads a file/],
    ];
    for (const [name, lines, pattern] of cases) {
      const yaml = kubeconfig().replace(`    token: ${TOKEN}`, lines.join('\n'));
      rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml }), pattern);
      const path = join(dir, `kc-${name}`);
      await writeFile(path, yaml);
      rejectsWithout(() => loadKubeConfig({ kind: 'file', path }), pattern);
    }
    rejectsWithout(
      () =>
        loadKubeConfig({
          kind: 'inline',
          yaml: kubeconfig().replace('certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==', 'certificate-authority: /etc/ssl/ca.crt'),
        }),
      /certificate-authority reads a file/,
    );
    rejectsWithout(
      () => loadKubeConfig({ kind: 'inline', yaml: kubeconfig().replace('    server:', '    proxy-url: http://169.254.169.254:80\n    server:') }),
      /proxy-url sends the traffic through a proxy/,
    );
    await assert.rejects(access(marker), 'no command ran');
  });

  it('answers an alias bomb with a validation error, not a crash', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 60 }, (_, i) => `b${i}: &b${i} [*${i === 0 ? 'a' : `b${i - 1}`},*${i === 0 ? 'a' : `b${i - 1}`}]`),
    ].join('\n');
    rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml: bomb }), /YAML alias/);
  });

  it('loads inline YAML', () => {
    assert.equal(loadKubeConfig({ kind: 'inline', yaml: kubeconfig() }).getCurrentContext(), 'target');
  });

  it('reports malformed YAML by position only, never quoting the text', () => {
    rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml: `users:\n- name: x\n  user:\n    token: ${TOKEN}\n   bad: [` }), /invalid YAML at line \d+/);
  });

  it('names a missing context, cluster or user', () => {
    rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml: kubeconfig({ context: 'other' }) }), /current-context "other" names no context/);
    rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml: kubeconfig({ user: 'nobody' }) }), /names user "nobody", which is not defined/);
    rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml: 'apiVersion: v1\nkind: Config\n' }), /current-context is not set/);
  });

  it('refuses http:// unless TLS verification is explicitly off (client-node would fail at the first request)', () => {
    rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml: kubeconfig({ server: 'http://127.0.0.1:8080' }) }), /insecure-skip-tls-verify/);
    assert.ok(loadKubeConfig({ kind: 'inline', yaml: kubeconfig({ server: 'http://127.0.0.1:8080', skipTls: true }) }));
  });

  it('keeps TLS verification on and the CA data when the kubeconfig does not turn it off', () => {
    const cluster = loadKubeConfig({ kind: 'inline', yaml: kubeconfig() }).getCurrentCluster();
    assert.equal(cluster?.skipTLSVerify, false);
    assert.equal(cluster?.caData, 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==');
  });

  it('keeps what the client needs: client certificate and key, TLS server name, the context namespace, a server URL without its trailing slash', () => {
    const yaml = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: target',
      '  cluster:',
      '    server: https://10.0.0.1:6443/',
      '    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
      '    tls-server-name: api.eu-prod-1.example.net',
      'users:',
      '- name: admin',
      '  user:',
      '    client-certificate-data: Q0VSVC1kYXRh',
      '    client-key-data: S0VZLWRhdGE=',
      'contexts:',
      '- name: target',
      '  context:',
      '    cluster: target',
      '    user: admin',
      '    namespace: flux-system',
      'current-context: target',
      '',
    ].join('\n');
    const kc = loadKubeConfig({ kind: 'inline', yaml });
    // The client appends /api/... to the server: a trailing slash would make every path start with //.
    assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
    assert.equal(kc.getCurrentCluster()?.tlsServerName, 'api.eu-prod-1.example.net');
    assert.equal(kc.getCurrentUser()?.certData, 'Q0VSVC1kYXRh');
    assert.equal(kc.getCurrentUser()?.keyData, 'S0VZLWRhdGE=');
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'flux-system');
  });

  it('hands client-node only the fields it names, whatever a rebuilt kubeconfig object carries besides', () => {
    const reading = readKubeconfig(kubeconfig(), 'kubeconfig');
    assert.ok(reading.ok);
    // An object that claims to be rebuilt but carries a command: only the named fields travel on.
    const smuggled = {
      ...reading.kubeconfig,
      users: reading.kubeconfig.users.map((u) => ({ ...u, exec: { command: 'sh', args: ['-c', 'id'] }, authProvider: { name: 'gcp' } })),
    };
    const kc = loadKubeConfig({ kind: 'rebuilt', kubeconfig: smuggled, label: 'kubeconfig' });
    const user = kc.getCurrentUser() as unknown as Record<string, unknown>;
    assert.equal(user['token'], TOKEN);
    assert.equal(user['exec'], undefined);
    assert.equal(user['authProvider'], undefined);
  });

  it('refuses in-cluster loading outside a pod instead of aiming at https://undefined:undefined', (t) => {
    const saved = { host: process.env['KUBERNETES_SERVICE_HOST'], port: process.env['KUBERNETES_SERVICE_PORT'] };
    delete process.env['KUBERNETES_SERVICE_HOST'];
    delete process.env['KUBERNETES_SERVICE_PORT'];
    t.after(() => {
      if (saved.host !== undefined) process.env['KUBERNETES_SERVICE_HOST'] = saved.host;
      if (saved.port !== undefined) process.env['KUBERNETES_SERVICE_PORT'] = saved.port;
    });
    rejectsWithout(() => loadKubeConfig({ kind: 'in-cluster' }), /not running in a Kubernetes pod/);
  });

  it('reports an unreadable file by path', () => {
    rejectsWithout(() => loadKubeConfig({ kind: 'file', path: join(dir, 'missing') }), /missing: cannot be read \(ENOENT\)/);
  });
});
