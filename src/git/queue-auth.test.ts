/**
 * The landing queue's MACs: every field an announcement or a pass commit
 * carries is covered, so changing any one of them (a commit amended under the
 * same ref name, an attempt renamed, another cluster tree) makes verification
 * fail; and a key too short to be secret is refused when it is read.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ValidationError } from '../errors.js';
import {
  type AnnouncementFields,
  type PassCommitFields,
  announcementAuthentic,
  announcementMac,
  generateQueueKey,
  parseQueueKey,
  passCommitAuthentic,
  passCommitMac,
} from './queue-auth.js';

const KEY = Buffer.from('0123456789abcdef'.repeat(4));
const OTHER_KEY = Buffer.from('fedcba9876543210'.repeat(4));

const ANNOUNCEMENT: AnnouncementFields = {
  branch: 'main',
  id: 'run-b',
  attempt: 1,
  pass: 'infrastructure',
  cluster: 'beta',
  parent: 'a'.repeat(40),
  tree: 'b'.repeat(40),
  sha: 'c'.repeat(40),
  issuedAt: 1_700_000_000_000,
};

/** Another value of each field, of the same kind. */
const CHANGED_ANNOUNCEMENT: { readonly [K in keyof AnnouncementFields]: AnnouncementFields[K] } = {
  branch: 'production',
  id: 'run-c',
  attempt: 2,
  pass: 'all',
  cluster: 'gamma',
  parent: 'd'.repeat(40),
  tree: 'e'.repeat(40),
  sha: 'f'.repeat(40),
  issuedAt: 1_700_000_000_001,
};

const PASS_COMMIT: PassCommitFields = { id: 'run-b', attempt: 1, pass: 'infrastructure', cluster: 'beta', clusterTree: 'b'.repeat(40) };

const CHANGED_PASS_COMMIT: { readonly [K in keyof PassCommitFields]: PassCommitFields[K] } = {
  id: 'run-c',
  attempt: 2,
  pass: 'all',
  cluster: 'gamma',
  // A removal: the commit has no tree at clusters/<cluster>.
  clusterTree: '',
};

const keysOf = <T extends object>(value: T) => Object.keys(value) as (keyof T)[];

describe('queue auth', () => {
  it("an announcement's MAC holds for its own fields and fails when any one field changes", () => {
    const mac = announcementMac(KEY, ANNOUNCEMENT);
    assert.match(mac, /^[0-9a-f]{64}$/);
    assert.ok(announcementAuthentic(KEY, ANNOUNCEMENT, mac), 'the original verifies');
    assert.ok(!announcementAuthentic(OTHER_KEY, ANNOUNCEMENT, mac), 'not under another key');
    assert.deepEqual(keysOf(CHANGED_ANNOUNCEMENT).sort(), keysOf(ANNOUNCEMENT).sort(), 'every field is changed once below');
    for (const field of keysOf(ANNOUNCEMENT)) {
      const changed = { ...ANNOUNCEMENT, [field]: CHANGED_ANNOUNCEMENT[field] };
      assert.ok(!announcementAuthentic(KEY, changed, mac), `changing only ${field} fails verification`);
    }
  });

  it("a pass commit's MAC holds for its own fields and fails when any one field changes", () => {
    const mac = passCommitMac(KEY, PASS_COMMIT);
    assert.match(mac, /^[0-9a-f]{64}$/);
    assert.ok(passCommitAuthentic(KEY, PASS_COMMIT, mac), 'the original verifies');
    assert.ok(!passCommitAuthentic(OTHER_KEY, PASS_COMMIT, mac), 'not under another key');
    assert.deepEqual(keysOf(CHANGED_PASS_COMMIT).sort(), keysOf(PASS_COMMIT).sort(), 'every field is changed once below');
    for (const field of keysOf(PASS_COMMIT)) {
      const changed = { ...PASS_COMMIT, [field]: CHANGED_PASS_COMMIT[field] };
      assert.ok(!passCommitAuthentic(KEY, changed, mac), `changing only ${field} fails verification`);
    }
  });

  it('an announcement and a pass commit never share a MAC, whatever their fields', () => {
    // The purpose is part of what is signed: one kind of MAC is never taken for the other.
    assert.notEqual(announcementMac(KEY, ANNOUNCEMENT), passCommitMac(KEY, PASS_COMMIT));
  });

  const sha = fc.stringMatching(/^[0-9a-f]{40}$/);
  const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
  const announcementFields = fc.record({
    branch: word,
    id: word,
    attempt: fc.integer({ min: 1, max: 999_999 }),
    pass: fc.constantFrom('infrastructure', 'all', 'upgrade'),
    cluster: word,
    parent: sha,
    tree: sha,
    sha,
    issuedAt: fc.integer({ min: 0, max: 999_999_999_999_999 }),
  });

  it('property: any announcement verifies, and no change of a single field keeps its MAC', () => {
    fc.assert(
      fc.property(announcementFields, announcementFields, fc.constantFrom(...keysOf(ANNOUNCEMENT)), (fields, other, field) => {
        fc.pre(fields[field] !== other[field]);
        const mac = announcementMac(KEY, fields);
        assert.ok(announcementAuthentic(KEY, fields, mac));
        assert.ok(!announcementAuthentic(KEY, { ...fields, [field]: other[field] }, mac), `${field} is covered`);
      }),
      { numRuns: 300 },
    );
  });

  it('property: any pass commit verifies, and no change of a single field keeps its MAC', () => {
    const passCommitFields = fc.record({
      id: word,
      attempt: fc.integer({ min: 1, max: 999_999 }),
      pass: fc.constantFrom('infrastructure', 'all', 'upgrade'),
      cluster: word,
      clusterTree: fc.oneof(sha, fc.constant('')),
    });
    fc.assert(
      fc.property(passCommitFields, passCommitFields, fc.constantFrom(...keysOf(PASS_COMMIT)), (fields, other, field) => {
        fc.pre(fields[field] !== other[field]);
        const mac = passCommitMac(KEY, fields);
        assert.ok(passCommitAuthentic(KEY, fields, mac));
        assert.ok(!passCommitAuthentic(KEY, { ...fields, [field]: other[field] }, mac), `${field} is covered`);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a key shorter than 32 characters, surrounding whitespace not counted', () => {
    for (const text of ['', 'changeme', 'x'.repeat(31), `  ${'x'.repeat(31)}\n`]) {
      assert.throws(
        () => parseQueueKey(text, 'queueKey'),
        (error: unknown) => {
          assert.ok(error instanceof ValidationError);
          assert.equal(error.issues[0]?.field, 'queueKey');
          assert.match(error.issues[0]?.message ?? '', /at least 32 characters/);
          return true;
        },
        `${JSON.stringify(text)} is no key`,
      );
    }
    assert.deepEqual(parseQueueKey(`  ${'x'.repeat(32)}\n`, 'queueKey'), Buffer.from('x'.repeat(32)));
    const generated = generateQueueKey();
    assert.match(generated, /^[0-9a-f]{64}$/);
    assert.deepEqual(parseQueueKey(generated, 'queueKey'), Buffer.from(generated));
  });
});
