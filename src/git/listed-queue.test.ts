import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { listedQueue, queueRef, verdictsOf, type QueuedCommit } from './landing-queue.js';

const SHA_A = 'a'.repeat(40);
const SHA_B = 'b'.repeat(40);
const MAC = '0'.repeat(64);
const ref = (id: string, issuedAt: number) => queueRef('main', { id, pass: 'infrastructure', attempt: 1, issuedAt, mac: MAC });

describe('the queue as a listing names it', () => {
  it('orders announcements by issue time, skips what is no announcement, and counts the unjudged as authentic', () => {
    const refs = new Map([
      ['refs/heads/main', SHA_A],
      [ref('run-late', 2_000), SHA_A],
      [ref('run-early', 1_000), SHA_B],
      ['refs/scaffold-queue/main/not-an-announcement', SHA_A],
      [`refs/scaffold-queue/main/nested/${ref('run-x', 500).split('/').pop()}`, SHA_A],
      [ref('run-odd', 1_500), 'not-a-sha'],
    ]);
    const slots = listedQueue('main', refs, new Map());
    assert.deepEqual(
      slots.map((slot) => [slot.ref, slot.issuedAt, slot.authentic, slot.judged]),
      [
        [ref('run-early', 1_000), 1_000, true, false],
        [ref('run-late', 2_000), 2_000, true, false],
      ],
    );
  });

  it('keeps what a fetch judged, by ref and commit: a ref moved to another commit is unjudged again', () => {
    const planted = ref('run-planted', 1_000);
    const fetched = {
      commits: [{ ref: planted, sha: SHA_A, authentic: false } as QueuedCommit],
      malformed: [{ ref: ref('run-bad', 900), sha: SHA_A, reason: 'x' }],
    };
    const verdicts = verdictsOf(fetched);
    const judged = listedQueue(
      'main',
      new Map([
        [planted, SHA_A],
        [ref('run-bad', 900), SHA_A],
      ]),
      verdicts,
    );
    assert.deepEqual(
      judged.map((slot) => [slot.authentic, slot.judged]),
      [
        [false, true],
        [false, true],
      ],
    );
    const moved = listedQueue('main', new Map([[planted, SHA_B]]), verdicts);
    assert.deepEqual(
      moved.map((slot) => [slot.authentic, slot.judged]),
      [[true, false]],
    );
  });
});
