import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AuthenticationError } from '../errors.js';
import { StaticTokenAuthenticator } from './static-token-authenticator.js';

const FIRST = 'first-token-0123456789';
const SECOND = 'second-token-abcdefghij';
const THIRD = 'third-token-with-a-rather-longer-length-than-the-others';

async function rejects(authenticator: StaticTokenAuthenticator, token: string): Promise<void> {
  await assert.rejects(
    authenticator.authenticate(token),
    (error: unknown) => {
      assert.ok(error instanceof AuthenticationError, `an AuthenticationError, got ${String(error)}`);
      assert.equal(error.code, 'unauthenticated');
      assert.equal(error.message, 'the bearer token is not valid');
      // (Only tokens long enough not to occur in the fixed message by chance.)
      for (const secret of [token, FIRST, SECOND, THIRD].filter((s) => s.length >= 8)) assert.ok(!error.message.includes(secret), 'no token in the message');
      return true;
    },
    JSON.stringify(token),
  );
}

describe('StaticTokenAuthenticator', () => {
  const authenticator = new StaticTokenAuthenticator([FIRST, SECOND, THIRD]);

  it('identifies a valid token by its position in the list: static:<i>', async () => {
    assert.deepEqual(await authenticator.authenticate(FIRST), { identity: 'static:0' });
    assert.deepEqual(await authenticator.authenticate(SECOND), { identity: 'static:1' });
    assert.deepEqual(await authenticator.authenticate(THIRD), { identity: 'static:2' });
  });

  it('never puts the token into the identity', async () => {
    const caller = await authenticator.authenticate(SECOND);
    assert.ok(!caller.identity.includes(SECOND));
  });

  it('refuses a wrong token and the empty token', async () => {
    await rejects(authenticator, 'wrong-token-0123456789');
    await rejects(authenticator, '');
  });

  it('refuses prefixes, suffixes and extensions of a valid token', async () => {
    for (const token of [
      FIRST.slice(0, -1),
      FIRST.slice(1),
      FIRST.slice(0, 8),
      `${FIRST}x`,
      `x${FIRST}`,
      `${FIRST}${SECOND}`,
      FIRST.toUpperCase(),
      ` ${FIRST}`,
    ]) {
      await rejects(authenticator, token);
    }
  });

  it('compares tokens of any length without throwing (digests are fixed-length)', async () => {
    // timingSafeEqual throws a RangeError on buffers of different lengths; the
    // authenticator compares SHA-256 digests, so no length reaches it.
    for (const token of ['a', 'x'.repeat(15), 'y'.repeat(17), 'z'.repeat(4096), '🔑'.repeat(20), '\u0000']) {
      await rejects(authenticator, token);
    }
  });

  it('accepts a token equal to one configured, whatever its length relative to the others', async () => {
    const lengths = new StaticTokenAuthenticator(['s'.repeat(16), 'l'.repeat(300)]);
    assert.deepEqual(await lengths.authenticate('l'.repeat(300)), { identity: 'static:1' });
    assert.deepEqual(await lengths.authenticate('s'.repeat(16)), { identity: 'static:0' });
    await rejects(lengths, 's'.repeat(300));
  });

  it('with no tokens configured refuses everything', async () => {
    const none = new StaticTokenAuthenticator([]);
    await rejects(none, FIRST);
    await rejects(none, '');
  });
});
