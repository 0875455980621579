import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { identityLeftovers, rewriteIdentity, type ClusterIdentity } from './cluster-identity.js';

const reference: ClusterIdentity = { name: 'development', domain: 'dev.tantilium.example.com', region: 'eu-central-1' };
const cluster: ClusterIdentity = { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' };

const rewrite = (text: string, to: ClusterIdentity = cluster) => rewriteIdentity(text, reference, to);
const leftovers = (text: string, to: ClusterIdentity = cluster) => identityLeftovers(text, reference, to);

describe('rewriteIdentity', () => {
  it('replaces the name, domain and region where they stand as whole values', () => {
    const text = 'cluster_name: development\ncluster_domain: dev.tantilium.example.com\ncluster_region: eu-central-1\npath: ./clusters/development/apps\n';
    assert.equal(rewrite(text), 'cluster_name: eu-prod-1\ncluster_domain: eu-prod-1.example.net\ncluster_region: eu-west-1\npath: ./clusters/eu-prod-1/apps\n');
  });

  it('moves a host under the old domain to the same host under the new domain', () => {
    assert.equal(rewrite('host: console.dev.tantilium.example.com'), 'host: console.eu-prod-1.example.net');
    assert.equal(rewrite('url: https://api.dev.tantilium.example.com/v1'), 'url: https://api.eu-prod-1.example.net/v1');
  });

  it('leaves longer names that merely start or end with an old value alone', () => {
    const text = [
      'other: development-2',
      'prefixed: pre-development',
      'region: eu-central-10',
      'zone: eu-central-1a',
      'domain: dev.tantilium.example.community',
      'longer: dev.tantilium.example.com.au',
      'email: platform-team@tantilium.example.com',
    ].join('\n');
    assert.equal(rewrite(text), text);
    assert.deepEqual(leftovers(text), []);
  });

  it('rewrites a region or a name that is one label of a longer DNS name', () => {
    assert.equal(rewrite('endpoint: s3.eu-central-1.amazonaws.com'), 'endpoint: s3.eu-west-1.amazonaws.com');
    assert.equal(rewrite('host: postgresql.development.svc.cluster.local'), 'host: postgresql.eu-prod-1.svc.cluster.local');
  });

  it('never replaces a replacement: a new domain containing the old name stays as given', () => {
    const to = { ...cluster, domain: 'development.example.net' };
    const out = rewrite('cluster_name: development\nhost: api.dev.tantilium.example.com\n', to);
    assert.equal(out, 'cluster_name: eu-prod-1\nhost: api.development.example.net\n');
    assert.deepEqual(leftovers(out, to), []);
  });

  it('keeps a domain that does not change even when a name inside it does', () => {
    const from = { name: 'dev', domain: 'dev.example.com', region: 'eu-central-1' };
    const to = { name: 'prod', domain: 'dev.example.com', region: 'eu-central-1' };
    assert.equal(rewriteIdentity('name: dev\nhost: api.dev.example.com\n', from, to), 'name: prod\nhost: api.dev.example.com\n');
  });

  it('is the identity when nothing changes', () => {
    const text = 'cluster_name: development # dev.tantilium.example.com';
    assert.equal(rewriteIdentity(text, reference, reference), text);
    assert.deepEqual(identityLeftovers(text, reference, reference), []);
  });
});

describe('identityLeftovers', () => {
  it('names each old value that is still there, once, sorted', () => {
    const text = 'a: development\nb: https://grafana.dev.tantilium.example.com\nc: eu-central-1\nd: development\n';
    assert.deepEqual(leftovers(text), ['dev.tantilium.example.com', 'development', 'eu-central-1']);
  });

  it('finds nothing in a rewritten text', () => {
    const text = 'a: development\nb: grafana.dev.tantilium.example.com\nc: s3.eu-central-1.amazonaws.com\n';
    assert.deepEqual(leftovers(rewrite(text)), []);
  });

  it('does not count `development-2` as the name `development`', () => {
    assert.deepEqual(leftovers('cluster: development-2'), []);
  });

  it('accepts a new domain below the old one: it contains the old domain by construction', () => {
    const to = { ...cluster, domain: 'eu.dev.tantilium.example.com' };
    const out = rewrite('host: console.dev.tantilium.example.com\ncluster_domain: dev.tantilium.example.com\n', to);
    assert.equal(out, 'host: console.eu.dev.tantilium.example.com\ncluster_domain: eu.dev.tantilium.example.com\n');
    assert.deepEqual(leftovers(out, to), []);
    // ...while the old domain standing alone is still a leftover.
    assert.deepEqual(leftovers('cluster_domain: dev.tantilium.example.com', to), ['dev.tantilium.example.com']);
  });
});
