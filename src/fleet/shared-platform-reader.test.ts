/**
 * What every cluster's render reads alike is parsed once for all the readers
 * of a process (each cluster of a batch plans with its own), and shared only
 * frozen; a cluster's own files are parsed for it alone.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RepoReader } from '../gitops/repo-reader.js';
import { SharedPlatformReader } from './shared-platform-reader.js';

const none: RepoReader = { read: async () => undefined, list: async () => [], isDirectory: async () => false };

describe('SharedPlatformReader.parse', () => {
  it('shares the objects of a platform file between readers, frozen', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared-by-readers\n';
    const first = new SharedPlatformReader(none, 'development').parse(text, 'base/config.yaml');
    const second = new SharedPlatformReader(none, 'development').parse(text, 'base/config.yaml');
    assert.equal(second[0], first[0]);
    assert.ok(Object.isFrozen(first[0]));
    assert.notEqual(new SharedPlatformReader(none, 'development').parse(text, 'base/other.yaml')[0], first[0], 'keyed by file too: errors name it');
  });

  it('parses a cluster’s own file afresh for each render', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n';
    const reader = new SharedPlatformReader(none, 'development');
    const first = reader.parse(text, 'clusters/alpha/config.yaml');
    assert.notEqual(reader.parse(text, 'clusters/alpha/config.yaml')[0], first[0]);
    assert.ok(!Object.isFrozen(first[0]));
  });
});
