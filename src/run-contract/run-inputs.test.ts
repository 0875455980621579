import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clusterSpecSchema } from '../model/cluster-spec.js';
import { catalogIssues } from './run-inputs.js';

describe('catalogIssues', () => {
  const cluster = clusterSpecSchema.parse({ name: 'eu-1', domain: 'eu-1.example.net', region: 'eu-west-1', role: 'tooling', dns_provider: 'route53' });
  const catalog = [
    { name: 'role', values: ['env', 'tooling'] },
    { name: 'dns_provider', values: ['cloudflare'] },
  ];

  it('refuses a value the platform catalog does not list, naming the values it does, before a run is stored', () => {
    assert.deepEqual(catalogIssues(cluster, catalog, 'cluster'), [
      { field: 'cluster.dns_provider', message: "must be one of the values the target platform's catalog lists: cloudflare" },
    ]);
  });

  it('refuses an attribute the platform does not select by, and accepts what its catalog lists', () => {
    assert.deepEqual(
      catalogIssues(cluster, [catalog[0]!], 'cluster').map((issue) => issue.field),
      ['cluster.dns_provider'],
    );
    assert.deepEqual(catalogIssues({ ...cluster, dns_provider: 'cloudflare' }, catalog, 'cluster'), []);
  });
});
