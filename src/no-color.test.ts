import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { colorAllowed, paint } from './no-color.js';

describe('colorAllowed', () => {
  it('colours a terminal only, and never when NO_COLOR is set to something', () => {
    assert.equal(colorAllowed({ isTTY: true }, {}), true);
    assert.equal(colorAllowed({ isTTY: false }, {}), false);
    assert.equal(colorAllowed({}, {}), false);
    assert.equal(colorAllowed({ isTTY: true }, { NO_COLOR: '1' }), false);
    // no-color.org: an empty value does not count.
    assert.equal(colorAllowed({ isTTY: true }, { NO_COLOR: '' }), true);
  });

  it('paints only when on', () => {
    assert.equal(paint(false, 31, 'x'), 'x');
    assert.equal(paint(true, 31, 'x'), '\u001b[31mx\u001b[0m');
  });
});
