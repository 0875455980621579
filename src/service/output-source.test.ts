import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OUTPUT_SOURCE_EVENT, outputSourceLine, parseOutputSource } from './output-source.js';

describe('output source lines', () => {
  it('round-trips a source, as one JSON event line', () => {
    const line = outputSourceLine({ source: 'pod/scaffold-r1-x7k2p', msg: 'runner output from pod scaffold-r1-x7k2p' });
    assert.equal(line, '{"event":"output_source","source":"pod/scaffold-r1-x7k2p","msg":"runner output from pod scaffold-r1-x7k2p"}');
    assert.ok(!line.includes('\n'));
    assert.deepEqual(parseOutputSource(line), { source: 'pod/scaffold-r1-x7k2p', msg: 'runner output from pod scaffold-r1-x7k2p' });
    assert.deepEqual(parseOutputSource(outputSourceLine({ source: 'process' })), { source: 'process' });
  });

  it('is not fooled by other lines', () => {
    for (const line of [
      '',
      'plain text',
      '{"event":"step_started","step":1}',
      `{"event":"${OUTPUT_SOURCE_EVENT}"}`,
      `{"event":"${OUTPUT_SOURCE_EVENT}","source":""}`,
      `{"event":"${OUTPUT_SOURCE_EVENT}","source":42}`,
      `{"event":"${OUTPUT_SOURCE_EVENT}","source":"pod/x"`,
      ` {"event":"${OUTPUT_SOURCE_EVENT}","source":"pod/x"}`,
    ]) {
      assert.equal(parseOutputSource(line), undefined, line);
    }
  });

  it('refuses an empty source name', () => {
    assert.throws(() => outputSourceLine({ source: '' }), RangeError);
  });
});
