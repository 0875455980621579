import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../errors.js';
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
    '    certificate-authority: ca.crt',
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

  it('loads a file and resolves relative certificate paths against its directory', async () => {
    const path = join(dir, 'ok');
    await writeFile(path, kubeconfig());
    const kc = loadKubeConfig({ kind: 'file', path });
    assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
    assert.equal(kc.getCurrentCluster()?.caFile, join(dir, 'ca.crt'));
    assert.equal(kc.getCurrentUser()?.token, TOKEN);
  });

  it('loads inline YAML', () => {
    assert.equal(loadKubeConfig({ kind: 'inline', yaml: kubeconfig() }).getCurrentContext(), 'target');
  });

  it('reports malformed YAML by position only, never quoting the text', () => {
    rejectsWithout(() => loadKubeConfig({ kind: 'inline', yaml: `users:\n- name: x\n  user:\n    token: ${TOKEN}\n   bad: [` }), /not valid YAML at line \d+/);
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

  it('reports an unreadable file by path', () => {
    rejectsWithout(() => loadKubeConfig({ kind: 'file', path: join(dir, 'missing') }), /missing: cannot be read \(ENOENT\)/);
  });
});
