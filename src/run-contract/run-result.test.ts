import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BATCH_CLUSTERS, type RunResult } from '../run/run-record.js';
import { boundedResult, parseRunResult, RESULT_MAX_BYTES } from './run-result.js';

const written = (result: RunResult): string => `${JSON.stringify(boundedResult(result))}\n`;

describe('boundedResult', () => {
  const commits = [{ pass: 'remove' as const, sha: 'a'.repeat(40) }];

  it('leaves a result that fits as it is', () => {
    const result: RunResult = {
      status: 'succeeded',
      message: 'removed clusters/eu-1',
      commits,
      step: 3,
      changes: { added: 0, modified: 0, removed: 31, kept: ['clusters/eu-1/flux-system/gotk-sync.yaml'] },
    };
    assert.equal(boundedResult(result), result);
  });

  it('fits a removal that kept hundreds of files into a termination message, keeping status, commit, counts and the first paths', () => {
    const kept = Array.from({ length: 400 }, (_, i) => `clusters/eu-1/hand-written/manifest-${String(i).padStart(3, '0')}.yaml`);
    const result: RunResult = {
      status: 'succeeded',
      message: 'removed clusters/eu-1: 31 file(s); 400 kept',
      commits,
      step: 3,
      changes: { added: 0, modified: 0, removed: 31, kept },
    };
    const text = written(result);
    assert.ok(Buffer.byteLength(text) <= RESULT_MAX_BYTES, `${Buffer.byteLength(text)} bytes`);
    const read = parseRunResult(text);
    assert.ok(read);
    assert.deepEqual([read.status, read.commits, read.changes?.removed, read.message], ['succeeded', commits, 31, result.message]);
    const shown = read.changes?.kept ?? [];
    assert.ok(shown.length > 20 && shown.length < 400, String(shown.length));
    assert.deepEqual(shown, kept.slice(0, shown.length));
  });

  it('fits the largest batch, every cluster name 63 characters long, with its commits and statuses whole, and reads it back', () => {
    const name = (i: number) => `c${String(i).padStart(2, '0')}`.padEnd(63, 'x');
    const clusters = Array.from({ length: MAX_BATCH_CLUSTERS }, (_, i) => name(i));
    const result: RunResult = {
      status: 'failed',
      message: `step 3 (push-upgrade) failed: ${'a finding, '.repeat(400)}`,
      gitops_path: `clusters/${name(0)}`,
      commits: clusters.map((cluster) => ({ pass: 'upgrade', sha: 'a'.repeat(40), cluster })),
      batch: Object.fromEntries(clusters.map((cluster) => [cluster, 'upgraded'])),
      step: 3,
      error_code: 'verification_failed',
      transient: false,
    };
    const bounded = boundedResult(result);
    assert.ok(Buffer.byteLength(`${JSON.stringify(bounded)}\n`) <= RESULT_MAX_BYTES);
    assert.deepEqual(parseRunResult(JSON.stringify(bounded))?.commits, result.commits);
    assert.deepEqual(parseRunResult(JSON.stringify(bounded))?.batch, result.batch);
  });

  it('cuts a failure message of many findings (quotes, newlines, non-ASCII) to fit, marked with …', () => {
    const findings = Array.from({ length: 300 }, (_, i) => `clusters/eu-1/apps/"app-${i}".yaml: ✗ field spec.interval is required\n`).join('');
    const result: RunResult = { status: 'failed', message: `step 2 (render-upgrade) failed: ${findings}`, commits: [], step: 2 };
    const text = written(result);
    assert.ok(Buffer.byteLength(text) <= RESULT_MAX_BYTES, `${Buffer.byteLength(text)} bytes`);
    assert.ok(Buffer.byteLength(text) > RESULT_MAX_BYTES - 64, 'not cut far more than needed');
    const read = parseRunResult(text);
    assert.ok(read);
    assert.equal(read.status, 'failed');
    assert.equal(read.step, 2);
    assert.ok(read.message.endsWith('…'));
    assert.ok(result.message.startsWith(read.message.slice(0, -1)));
  });
});
