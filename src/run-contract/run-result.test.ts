import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { batchResultFits } from '../run/batch-issues.js';
import { BATCH_CLUSTER_STATUSES, MAX_BATCH_CLUSTERS, type RunResult } from '../run/run-record.js';
import { boundedResult, lastEventOf, parseRunResult, RESULT_MAX_BYTES } from './run-result.js';

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

  it('fits every batch a run may take (batchResultFits), commits and statuses whole, with any ids, statuses and message', () => {
    // Cluster names are DNS labels of 1 to 63 characters.
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
    const batch = fc.uniqueArray(label, { minLength: 1, maxLength: MAX_BATCH_CLUSTERS + 4 }).filter(batchResultFits);
    fc.assert(
      fc.property(
        batch,
        fc.constantFrom(40, 64),
        fc.constantFrom(...BATCH_CLUSTER_STATUSES),
        fc.string({ maxLength: 6000, unit: 'binary' }),
        (clusters, idLength, status, message) => {
          const result: RunResult = {
            status: 'failed',
            message,
            gitops_path: `clusters/${clusters[0]}`,
            commits: clusters.map((cluster) => ({ pass: 'upgrade', sha: 'a'.repeat(idLength), cluster })),
            changes: { added: 1234, modified: 56789, removed: 0, credentialsKept: 123 },
            batch: Object.fromEntries(clusters.map((cluster) => [cluster, status])),
            step: 3,
            error_code: 'verification_failed',
            transient: false,
          };
          const text = written(result);
          assert.ok(Buffer.byteLength(text) <= RESULT_MAX_BYTES, `${Buffer.byteLength(text)} bytes`);
          const read = parseRunResult(text);
          assert.deepEqual(read?.commits, result.commits);
          assert.deepEqual(read?.batch, result.batch);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('lets short names fill most of a run and long ones half of one', () => {
    const named = (count: number, length: number) => Array.from({ length: count }, (_, i) => `c${String(i).padStart(2, '0')}`.padEnd(length, 'x'));
    // With SHA-256 ids: the fixed 16 of before fitted 63-character names only with SHA-1 ones.
    assert.ok(batchResultFits(named(15, 63)));
    assert.ok(!batchResultFits(named(16, 63)));
    assert.ok(batchResultFits(named(27, 10)));
    assert.ok(!batchResultFits(named(28, 10)));
    assert.ok(!batchResultFits(named(MAX_BATCH_CLUSTERS + 1, 3)), 'never more than MAX_BATCH_CLUSTERS');
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

describe('parseRunResult', () => {
  const result = {
    status: 'failed',
    message: 'step 2 failed',
    commits: [{ pass: 'all', sha: 'a'.repeat(40) }],
    step: 2,
    error_code: 'verification_failed',
    transient: false,
  };

  it('reads a result as the runner wrote it, the message defaulting to empty', () => {
    assert.deepEqual(parseRunResult(`${JSON.stringify(result)}\n`), result);
    assert.deepEqual(parseRunResult('{"status":"succeeded"}'), { status: 'succeeded', message: '' });
  });

  it('reads nothing from a result file that is missing, empty, cut short or not JSON', () => {
    for (const text of [undefined, '', '\n', `${JSON.stringify(result).slice(0, 30)}`, 'Killed', '[]', 'null']) {
      assert.equal(parseRunResult(text), undefined, JSON.stringify(text));
    }
  });

  it('refuses a result that claims what a runner cannot report: another status, negative counts, an unknown pass', () => {
    for (const hostile of [
      { ...result, status: 'running' },
      { ...result, status: 'cancelled' },
      { status: 'succeeded', changes: { added: -1, modified: 0, removed: 0 } },
      { status: 'succeeded', changes: { added: 0.5, modified: 0, removed: 0 } },
      { status: 'succeeded', commits: [{ pass: 'everything', sha: 'a'.repeat(40) }] },
      { ...result, error_code: 'no_such_code' },
    ]) {
      assert.equal(parseRunResult(JSON.stringify(hostile)), undefined, JSON.stringify(hostile));
    }
  });
});

describe('lastEventOf', () => {
  it("takes the last event's message and step, skipping lines that are not JSON events", () => {
    const lines = [
      '{"level":30,"msg":"step 1 started","step":1}',
      '{"level":30,"msg":"step 2 started","step":2}',
      'fatal: unable to access the repository',
      '{not json',
      '{"level":30,"other":"no message or step"}',
    ];
    assert.deepEqual(lastEventOf(lines), { message: 'step 2 started', step: 2 });
    assert.deepEqual(lastEventOf(['plain text only']), {});
  });
});
