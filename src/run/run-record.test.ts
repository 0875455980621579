/** How a run keeps its review requests from the runner's reports (`withReviewRequest`, pure). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withReviewRequest, type RunReviewRequest } from './run-record.js';

const at = (iso: string): Date => new Date(iso);
const pr = (fields: Partial<RunReviewRequest>): RunReviewRequest => ({
  pass: 'infrastructure',
  forge: 'github',
  number: 1,
  url: 'https://github.com/acme/gitops/pull/1',
  state: 'open',
  updatedAt: at('2026-01-01T00:00:00Z'),
  ...fields,
});

describe('withReviewRequest', () => {
  it('appends a new request and replaces a known one in place, keeping the order they were opened in', () => {
    const opened = withReviewRequest(
      withReviewRequest([], pr({ branch: 'scaffold/c/infrastructure' })),
      pr({ pass: 'all', number: 2, url: 'https://github.com/acme/gitops/pull/2', updatedAt: at('2026-01-01T00:01:00Z') }),
    );
    const merged = withReviewRequest(opened, pr({ state: 'merged', updatedAt: at('2026-01-01T00:02:00Z') }));
    assert.deepEqual(
      merged.map((r) => `${r.number}:${r.state}`),
      ['1:merged', '2:open'],
    );
    assert.equal(merged[0]?.branch, 'scaffold/c/infrastructure', 'a report without the branch keeps the one known');
  });

  it('ignores a report older than the one kept, and returns the same list so nothing is written', () => {
    const kept = [pr({ state: 'merged', updatedAt: at('2026-01-01T00:05:00Z') })];
    assert.equal(withReviewRequest(kept, pr({ state: 'open', updatedAt: at('2026-01-01T00:01:00Z') })), kept);
  });

  it('tells requests apart by forge and number, not by pass (a rerun may open a new one for the same pass)', () => {
    const list = withReviewRequest(
      [pr({ state: 'closed' })],
      pr({ number: 3, url: 'https://github.com/acme/gitops/pull/3', updatedAt: at('2026-01-02T00:00:00Z') }),
    );
    assert.deepEqual(
      list.map((r) => `${r.pass}#${r.number}:${r.state}`),
      ['infrastructure#1:closed', 'infrastructure#3:open'],
    );
  });
});
