import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GroupBatcher, type ItemOutcome } from './group-batcher.js';

/** A send whose batches stay in flight until the test lets them go. */
function heldSend() {
  const batches: { inputs: readonly number[]; release: (outcomes?: readonly ItemOutcome<string>[]) => void; fail: (error: unknown) => void }[] = [];
  const send = (inputs: readonly number[]) =>
    new Promise<readonly ItemOutcome<string>[]>((resolve, reject) => {
      batches.push({
        inputs,
        release: (outcomes) => resolve(outcomes ?? inputs.map((input) => ({ ok: true, value: `v${input}` }))),
        fail: reject,
      });
    });
  return { batches, send };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupBatcher', () => {
  it('sends a call alone and at once when nothing is in flight', async () => {
    const { batches, send } = heldSend();
    const batcher = new GroupBatcher({ send, maxInFlight: 1, maxBatch: 10 });
    const result = batcher.submit(1);
    assert.deepEqual(
      batches.map((b) => b.inputs),
      [[1]],
    );
    batches[0]!.release();
    assert.equal(await result, 'v1');
  });

  it('groups the calls that arrive while the slots are taken, in order, and sends them when one frees', async () => {
    const { batches, send } = heldSend();
    const batcher = new GroupBatcher({ send, maxInFlight: 2, maxBatch: 10 });
    const results = [1, 2, 3, 4, 5].map((n) => batcher.submit(n));
    assert.deepEqual(
      batches.map((b) => b.inputs),
      [[1], [2]],
      'two in flight; the rest wait',
    );
    batches[1]!.release();
    await settle();
    assert.deepEqual(
      batches.map((b) => b.inputs),
      [[1], [2], [3, 4, 5]],
    );
    batches[0]!.release();
    batches[2]!.release();
    assert.deepEqual(await Promise.all(results), ['v1', 'v2', 'v3', 'v4', 'v5']);
  });

  it('splits what waits into batches of at most maxBatch', async () => {
    const { batches, send } = heldSend();
    const batcher = new GroupBatcher({ send, maxInFlight: 1, maxBatch: 2 });
    const results = [1, 2, 3, 4, 5, 6].map((n) => batcher.submit(n));
    for (let i = 0; i < 4; i++) {
      batches[i]!.release();
      await settle();
    }
    assert.deepEqual(
      batches.map((b) => b.inputs),
      [[1], [2, 3], [4, 5], [6]],
    );
    assert.equal((await Promise.all(results)).length, 6);
  });

  it('fails only the items whose outcome is an error', async () => {
    const { batches, send } = heldSend();
    const batcher = new GroupBatcher({ send, maxInFlight: 1, maxBatch: 10 });
    const first = batcher.submit(0);
    const second = batcher.submit(1);
    const third = batcher.submit(2);
    batches[0]!.release();
    await settle();
    batches[1]!.release([
      { ok: false, error: new Error('refused') },
      { ok: true, value: 'fine' },
    ]);
    assert.equal(await first, 'v0');
    await assert.rejects(second, /refused/);
    assert.equal(await third, 'fine');
  });

  it('fails every item of a batch whose send throws, and goes on with the next batch', async () => {
    const { batches, send } = heldSend();
    const batcher = new GroupBatcher({ send, maxInFlight: 1, maxBatch: 10 });
    const results = [1, 2, 3].map((n) => batcher.submit(n));
    batches[0]!.fail(new Error('connection lost'));
    await assert.rejects(results[0]!, /connection lost/);
    await settle();
    batches[1]!.fail(new Error('connection lost again'));
    await assert.rejects(results[1]!, /again/);
    await assert.rejects(results[2]!, /again/);
    const later = batcher.submit(4);
    batches[2]!.release();
    assert.equal(await later, 'v4', 'a failed batch frees its slot');
  });

  it('fails a batch that comes back with the wrong number of outcomes instead of resolving some items with nothing', async () => {
    const { batches, send } = heldSend();
    const batcher = new GroupBatcher({ send, maxInFlight: 1, maxBatch: 10 });
    const results = [1, 2, 3].map((n) => batcher.submit(n));
    batches[0]!.release();
    await settle();
    batches[1]!.release([{ ok: true, value: 'only one' }]);
    await assert.rejects(results[1]!, /2 came back with 1/);
    await assert.rejects(results[2]!, /2 came back with 1/);
  });

  it('refuses limits below one', () => {
    const { send } = heldSend();
    assert.throws(() => new GroupBatcher({ send, maxInFlight: 0, maxBatch: 10 }), RangeError);
    assert.throws(() => new GroupBatcher({ send, maxInFlight: 1, maxBatch: 0 }), RangeError);
  });
});
