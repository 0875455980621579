import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PgliteSqlClient } from './pglite-sql-client.js';

describe('PgliteSqlClient', () => {
  let client: PgliteSqlClient | undefined;
  let unsliced: PgliteSqlClient | undefined;
  before(async () => {
    [client, unsliced] = await Promise.all([PgliteSqlClient.open({ sliceMs: 0 }), PgliteSqlClient.open({ sliceMs: 60_000 })]);
  });
  after(async () => {
    await Promise.all([client?.close(), unsliced?.close()]);
  });

  it('runs top-level operations one at a time, in the order they were asked for, past failures', async () => {
    const order: number[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        (i % 5 === 4 ? client!.query('SELECT * FROM no_such_table') : client!.query<{ n: number }>('SELECT $1::int AS n', [i])).then((r) => {
          order.push(i);
          return r.rows[0]?.n;
        }),
      ),
    );
    assert.deepEqual(
      order,
      [...Array(20).keys()].filter((i) => i % 5 !== 4),
    );
    assert.equal(results.filter((r) => r.status === 'rejected').length, 4);
  });

  it('keeps a transaction whole: queued statements wait until it ends', async () => {
    await client!.query('CREATE TABLE IF NOT EXISTS tx_probe (n int)');
    const seen: string[] = [];
    const tx = client!.transaction(async (t) => {
      await t.query('INSERT INTO tx_probe VALUES (1)');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await t.query('INSERT INTO tx_probe VALUES (2)');
      seen.push('tx');
    });
    const count = client!.query<{ n: number }>('SELECT count(*)::int AS n FROM tx_probe').then((r) => {
      seen.push('count');
      return r.rows[0]?.n;
    });
    await tx;
    assert.equal(await count, 2, 'the count saw the committed transaction, not half of it');
    assert.deepEqual(seen, ['tx', 'count']);
  });

  it('lets the event loop turn while a long queue drains', async () => {
    // A callback queued for the next turn runs before 200 queued statements
    // are done when the client yields, and only after them when it does not.
    const probe = async (c: PgliteSqlClient): Promise<number> => {
      let done = 0;
      const queries = Array.from({ length: 200 }, () => c.query('SELECT 1').then(() => done++));
      const seenAtTurn = new Promise<number>((resolve) => setImmediate(() => setImmediate(() => resolve(done))));
      await Promise.all(queries);
      return seenAtTurn;
    };
    assert.ok((await probe(client!)) < 200, 'a 0 ms slice yields between statements');
    assert.equal(await probe(unsliced!), 200, 'a slice longer than the work does not yield');
  });

  it('refuses a negative slice and work after close', async () => {
    await assert.rejects(PgliteSqlClient.open({ sliceMs: -1 }), RangeError);
    const closing = await PgliteSqlClient.open();
    const pending = closing.query('SELECT 1');
    await closing.close();
    await pending;
    await assert.rejects(closing.query('SELECT 1'), /closed/);
  });
});
