import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { substituteVariables } from './substitute-variables.js';

describe('substituteVariables', () => {
  const values = new Map([
    ['domain', 'example.net'],
    ['empty', ''],
  ]);

  it('replaces uses and renders $${} escapes as ${}', () => {
    assert.equal(substituteVariables('web.${domain} $${domain} ${unset}!', values), 'web.example.net ${domain} !');
  });

  it('applies defaults as envsubst does: `:-`/`:=` also for empty values, `-`/`=` only for unset ones', () => {
    assert.equal(substituteVariables('${unset:=a} ${unset:-b} ${unset-c} ${unset=d}', values), 'a b c d');
    assert.equal(substituteVariables('${empty:-x}|${empty-x}|${domain:-x}', values), 'x||example.net');
  });

  it('leaves text without references alone, including ${} that is not a variable', () => {
    assert.equal(substituteVariables('plain $domain ${1x} text', values), 'plain $domain ${1x} text');
  });
});
