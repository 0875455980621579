import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
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

  it('knows loopback hosts', () => {
    for (const host of ['localhost', '127.0.0.1', '127.255.0.9', '::1', '[::1]']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['127.0.0.1.example.net', '127.256.0.1', '0.0.0.0', '169.254.169.254', '::ffff:127.0.0.1', undefined])
      assert.ok(!isLoopbackHost(host), String(host));
  });
});
