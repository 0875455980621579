import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ValidationError } from '../errors.js';
import { checkRepositoryUrl, isLoopbackHost, OPERATOR_POLICY, parseRepositoryUrl, type RepositoryUrlPolicy } from './repository-url.js';

/** What the service allows a caller in embedded mode: its own repository only, plain transports to loopback. */
const EMBEDDED: RepositoryUrlPolicy = { scp: false, plainTransports: 'loopback', localRepositories: ['/srv/data/gitops.git'] };
const PRODUCTION: RepositoryUrlPolicy = { scp: false, plainTransports: 'never', localRepositories: [] };

function refused(url: string, policy: RepositoryUrlPolicy, pattern?: RegExp): void {
  assert.throws(
    () => checkRepositoryUrl(url, policy, 'repository.url'),
    (error: unknown) => {
      assert.ok(error instanceof ValidationError, `${url}: ${String(error)}`);
      assert.equal(error.issues[0]?.field, 'repository.url');
      if (pattern) assert.match(error.message, pattern, url);
      return true;
    },
    url,
  );
}

describe('parseRepositoryUrl', () => {
  it('accepts the supported transports', () => {
    assert.equal(parseRepositoryUrl('https://git.example.net/platform/gitops.git').kind, 'https');
    assert.equal(parseRepositoryUrl('https://git.example.net:8443/gitops.git').origin, 'https://git.example.net:8443/');
    assert.equal(parseRepositoryUrl('http://127.0.0.1:8080/repo.git').kind, 'http');
    assert.equal(parseRepositoryUrl('http://[::1]:8080/repo.git').host, '::1');
    assert.equal(parseRepositoryUrl('ssh://git@git.example.net:2222/platform/gitops.git').kind, 'ssh');
    const scp = parseRepositoryUrl('git@github.com:org/gitops.git');
    assert.equal(scp.kind, 'ssh');
    assert.equal(scp.host, 'github.com');
    assert.equal(parseRepositoryUrl('git://127.0.0.1:9418/repo.git').kind, 'git');
    assert.deepEqual(parseRepositoryUrl('file:///srv/git/repo.git').path, '/srv/git/repo.git');
    const path = parseRepositoryUrl('/srv/git/repo.git');
    assert.deepEqual([path.kind, path.url], ['file', 'file:///srv/git/repo.git']);
  });

  it('rejects embedded credentials without repeating them', () => {
    for (const url of [
      'https://alice:pa55word-xyz@git.example.net/repo.git',
      'https://tok3n-value-xyz@git.example.net/repo.git',
      'ssh://git:pa55word-xyz@git.example.net/repo.git',
      'alice:pa55word-xyz@git.example.net:repo.git',
    ]) {
      assert.throws(
        () => parseRepositoryUrl(url),
        (error: unknown) => {
          assert.ok(error instanceof ValidationError, `${url}: ${String(error)}`);
          assert.match(error.message, /credentials/);
          assert.ok(!error.message.includes('pa55word') && !error.message.includes('tok3n'), error.message);
          return true;
        },
      );
    }
  });

  it('rejects other transports, relative paths, options and control characters', () => {
    for (const url of [
      '',
      'ext::sh -c touch% /tmp/pwned',
      'fd::3',
      'ftp://example.net/repo.git',
      'relative/path/repo.git',
      '-uhack',
      'https://example.net/repo.git\nAuthorization: x',
      'https://example.net/',
      'file://otherhost/repo.git',
      'HTTPS://example.net/repo.git',
      `https://example.net/${'a'.repeat(2100)}`,
    ]) {
      assert.throws(() => parseRepositoryUrl(url), ValidationError, url);
    }
  });

  // Each of these passed the old checks while git read it differently.
  it('refuses a backslash, which curl reads as part of the user info and WHATWG as a path separator', () => {
    // WHATWG: host localhost. curl/git: user "localhost\", host 169.254.169.254.
    assert.equal(new URL('http://localhost\\@169.254.169.254/x.git').hostname, 'localhost');
    refused('http://localhost\\@169.254.169.254/latest/meta-data', OPERATOR_POLICY, /backslash/);
    refused('https://git.example.net\\@evil.example/x.git', OPERATOR_POLICY, /backslash/);
  });

  it('refuses a scheme without "//", which git reads as scp-style ssh', () => {
    // WHATWG reads both as proper URLs; git reads host "file" / "https".
    assert.equal(new URL('https:host/x').hostname, 'host');
    refused('file:etc', OPERATOR_POLICY, /ssh to host "file"/);
    refused('https:git.example.net/x.git', OPERATOR_POLICY, /ssh to host "https"/);
    refused('http:127.0.0.1/x.git', OPERATOR_POLICY, /ssh to host "http"/);
  });

  it('refuses hosts that parsers disagree on', () => {
    refused('http://0x7f.1/x.git', OPERATOR_POLICY, /disagree/);
    refused('http://2130706433/x.git', OPERATOR_POLICY, /disagree/);
    refused('https://git.exa%6dple.net/x.git', OPERATOR_POLICY);
    refused('http://localhost:80@169.254.169.254/x.git', OPERATOR_POLICY, /credentials/);
    refused('https://git.example.net:99999/x.git', OPERATOR_POLICY, /port/);
  });

  it('refuses local paths git may resolve elsewhere', () => {
    for (const url of ['file:///srv/../etc/x.git', 'file:///srv/./x.git', 'file:///srv//x.git', 'file:///srv/a%2e%2e/x', '/srv/../etc']) {
      refused(url, OPERATOR_POLICY);
    }
  });
});

describe('checkRepositoryUrl', () => {
  it('takes scp-style addresses only where the policy enables them', () => {
    assert.equal(checkRepositoryUrl('git@github.com:org/gitops.git', OPERATOR_POLICY).kind, 'ssh');
    refused('git@github.com:org/gitops.git', EMBEDDED, /scp-style/);
    assert.equal(checkRepositoryUrl('ssh://git@github.com/org/gitops.git', EMBEDDED).kind, 'ssh');
  });

  it('takes http:// and git:// to loopback only in embedded mode, never in production', () => {
    assert.equal(checkRepositoryUrl('http://127.0.0.1:8080/x.git', EMBEDDED).kind, 'http');
    assert.equal(checkRepositoryUrl('git://[::1]:9418/x.git', EMBEDDED).kind, 'git');
    refused('http://169.254.169.254/x.git', EMBEDDED, /loopback/);
    refused('http://127.0.0.1.example.net/x.git', EMBEDDED, /loopback/);
    refused('http://127.0.0.1:8080/x.git', PRODUCTION, /not accepted/);
    assert.equal(checkRepositoryUrl('https://git.example.net/x.git', PRODUCTION).kind, 'https');
  });

  it('takes file:// only to configured repositories, with one answer whatever exists on the host', () => {
    assert.equal(checkRepositoryUrl('file:///srv/data/gitops.git', EMBEDDED).kind, 'file');
    assert.equal(checkRepositoryUrl('/srv/data/gitops.git', EMBEDDED).kind, 'file');
    const messages = new Set<string>();
    for (const url of ['file:///etc', 'file:///tmp', 'file:///srv/data/other.git', 'file:///no/such/path.git', '/srv/data']) {
      try {
        checkRepositoryUrl(url, EMBEDDED, 'repository.url');
        assert.fail(`${url} was accepted`);
      } catch (error) {
        assert.ok(error instanceof ValidationError);
        messages.add(error.message);
      }
    }
    assert.equal(messages.size, 1, [...messages].join('\n'));
    refused('file:///srv/data/gitops.git', PRODUCTION, /not configured/);
  });

  it('limits every URL to an operator allow-list when one is set', () => {
    const policy: RepositoryUrlPolicy = {
      ...PRODUCTION,
      allowList: ['https://git.example.net/platform/', 'file:///srv/mirror.git', 'http://127.0.0.1:8080/repo.git'],
    };
    assert.equal(checkRepositoryUrl('https://git.example.net/platform/eu.git', policy).kind, 'https');
    assert.equal(checkRepositoryUrl('file:///srv/mirror.git', policy).kind, 'file');
    assert.equal(checkRepositoryUrl('http://127.0.0.1:8080/repo.git', policy).kind, 'http');
    refused('https://git.example.net/platformx/eu.git', policy, /ALLOWED_REPOSITORY_URLS/);
    refused('https://git.example.net/other/eu.git', policy, /ALLOWED_REPOSITORY_URLS/);
    refused('file:///srv/other.git', policy, /ALLOWED_REPOSITORY_URLS/);
  });

  it('takes an allow-list entry as a prefix only when it ends in "/": any other entry is one exact URL', () => {
    const exact = (entry: string): RepositoryUrlPolicy => ({ ...PRODUCTION, allowList: [entry] });
    assert.equal(checkRepositoryUrl('https://git.example.net/platform', exact('https://git.example.net/platform')).kind, 'https');
    refused('https://git.example.net/platform-evil/x.git', exact('https://git.example.net/platform'), /ALLOWED_REPOSITORY_URLS/);
    refused('https://git.example.net/platform/x.git', exact('https://git.example.net/platform'), /ALLOWED_REPOSITORY_URLS/);
    assert.equal(checkRepositoryUrl('https://github.com/acme/gitops.git', exact('https://github.com/acme/gitops.git')).kind, 'https');
    refused('https://github.com/acme/gitops.git-fork', exact('https://github.com/acme/gitops.git'), /ALLOWED_REPOSITORY_URLS/);
    // An entry without a path must not admit a host that merely starts with its name.
    refused('https://git.example.net.attacker.com/x.git', exact('https://git.example.net'), /ALLOWED_REPOSITORY_URLS/);
    refused('https://git.example.net.attacker.com/x.git', exact('https://git.example.net/'), /ALLOWED_REPOSITORY_URLS/);
    assert.equal(checkRepositoryUrl('https://git.example.net/any/x.git', exact('https://git.example.net/')).kind, 'https');
  });

  it('refuses a "." or ".." segment or an encoded "/", which would leave an allowed prefix for another repository', () => {
    // git ls-remote http://host/platform/../secret.git asks the server for /secret.git/info/refs (curl removes dot segments).
    const policy: RepositoryUrlPolicy = { ...PRODUCTION, allowList: ['https://git.example.net/platform/', 'ssh://git@git.example.net/platform/'] };
    for (const url of [
      'https://git.example.net/platform/../secret.git',
      'https://git.example.net/platform/%2e%2e/secret.git',
      'https://git.example.net/platform/.%2E/secret.git',
      'https://git.example.net/platform/./x.git',
      'https://git.example.net/platform/..%2fsecret.git',
      'https://git.example.net/platform/..%5Csecret.git',
      'ssh://git@git.example.net/platform/../secret.git',
    ]) {
      refused(url, policy, /"\." or "\.\." path segment/);
      refused(url, OPERATOR_POLICY, /"\." or "\.\." path segment/);
    }
    refused('git@git.example.net:platform/../secret.git', OPERATOR_POLICY, /"\." or "\.\." path segment/);
    // Dots inside a name are not segments.
    assert.equal(checkRepositoryUrl('https://git.example.net/platform/..x/a.b..git', policy).kind, 'https');
    assert.equal(checkRepositoryUrl('git@git.example.net:platform/...git', OPERATOR_POLICY).kind, 'ssh');
  });

  it('refuses what ssh would read as an option: a leading "-", an ssh user starting with "-"', () => {
    refused('-oProxyCommand=x@github.com:org/repo.git', OPERATOR_POLICY, /must not start with "-"/);
    refused('-github.com:org/repo.git', OPERATOR_POLICY, /must not start with "-"/);
    refused('ssh://-oX@github.com/org/repo.git', OPERATOR_POLICY, /ssh user starting with "-"/);
    refused('ssh://-oProxyCommand=x@github.com/org/repo.git', OPERATOR_POLICY);
    assert.equal(checkRepositoryUrl('ssh://git-user@github.com/org/repo.git', OPERATOR_POLICY).kind, 'ssh');
    assert.equal(checkRepositoryUrl('ssh://_svc.ci@github.com/org/repo.git', OPERATOR_POLICY).kind, 'ssh');
  });

  it('takes http:// only to loopback itself, not to a name that starts or ends like one', () => {
    for (const url of [
      'http://localhost.example.net/x.git',
      'http://localhost-evil.example.net/x.git',
      'git://localhost.example.net/x.git',
      'http://127.0.0.1.example.net/x.git',
    ]) {
      refused(url, EMBEDDED, /loopback/);
    }
    assert.equal(checkRepositoryUrl('http://localhost:8080/x.git', EMBEDDED).kind, 'http');
  });

  it('knows loopback hosts', () => {
    for (const host of ['localhost', '127.0.0.1', '127.255.0.9', '::1', '[::1]']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['127.0.0.1.example.net', '127.256.0.1', '0.0.0.0', '169.254.169.254', '::ffff:127.0.0.1', undefined])
      assert.ok(!isLoopbackHost(host), String(host));
    for (const host of ['LOCALHOST', '[::1]', '0:0:0:0:0:0:0:1', '127.0.0.1']) assert.ok(isLoopbackHost(host), host);
    for (const host of [
      'localhost.example.net',
      'localhost.',
      'localhostx',
      'localhost-1',
      'xlocalhost',
      'a.localhost',
      '127.0.0.1.example.net',
      '[::1].example',
      '::1.example',
      '::10',
      '127.0.0.1x',
      '127.0.0',
      '',
    ])
      assert.equal(isLoopbackHost(host), false, host);
  });

  it('takes no host that merely starts or ends with a loopback name for loopback (property)', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
    const loopback = fc.constantFrom('localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]');
    const near = fc.oneof(
      fc.tuple(loopback, fc.constantFrom('.', '-', ''), label).map(([name, sep, rest]) => `${name}${sep}${rest}`),
      fc.tuple(label, fc.constantFrom('.', '-', ''), loopback).map(([rest, sep, name]) => `${rest}${sep}${name}`),
      loopback.map((name) => `${name}.`),
    );
    fc.assert(
      fc.property(near, (host) => {
        assert.equal(isLoopbackHost(host), false, host);
        assert.equal(isLoopbackHost(host.toUpperCase()), false, host);
      }),
    );
  });
});
