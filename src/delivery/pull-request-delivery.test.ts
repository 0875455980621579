/**
 * Pull-request delivery against a scripted forge: a rerun reuses the request an
 * earlier attempt opened, auto_merge merges only what the forge calls
 * mergeable and only the head it read, and a merged pass records the merge
 * commit whatever became of its branch.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConflictError } from '../errors.js';
import type { DeliverPassRequest, ReviewRequestRef } from '../run/delivery.js';
import type { GitWorkspace } from '../run/ports.js';
import { capturingLogger } from '../../test/support/runner.js';
import type { ForgeClient, NewReviewRequest, ReviewRequest } from './forge-client.js';
import { PullRequestDelivery } from './pull-request-delivery.js';

const HEAD = 'scaffold/eu-2/infrastructure';
/** The commit the run pushes to its review branch. */
const PUSHED = 'b'.repeat(40);
const URL = 'https://github.com/acme/platform-gitops/pull/7';

/** A request as the forge reads it. */
const request = (fields: Partial<ReviewRequest> = {}): ReviewRequest => ({
  number: 7,
  url: URL,
  state: 'open',
  headSha: PUSHED,
  mergeable: false,
  ...fields,
});

/** A forge whose `get` answers `reads` in turn (the last one again), recording every call. */
function scriptedForge(options: {
  readonly found?: ReviewRequest;
  readonly opened?: ReviewRequest;
  readonly reads: readonly ReviewRequest[];
  readonly mergeAnswers?: boolean;
  readonly deleteFails?: boolean;
}) {
  const calls = { open: [] as NewReviewRequest[], get: 0, merge: [] as [number, string][], deleted: [] as string[] };
  let reads = 0;
  const forge: ForgeClient = {
    forge: 'github',
    findOpen: () => Promise.resolve(options.found),
    open: (asked) => {
      calls.open.push(asked);
      return Promise.resolve(options.opened ?? request());
    },
    get: () => {
      calls.get += 1;
      return Promise.resolve(options.reads[Math.min(reads++, options.reads.length - 1)]!);
    },
    merge: (number, headSha) => {
      calls.merge.push([number, headSha]);
      return Promise.resolve(options.mergeAnswers ?? true);
    },
    deleteBranch: (branch) => {
      calls.deleted.push(branch);
      return options.deleteFails ? Promise.reject(new Error('GitHub deleting branch failed (HTTP 403): Resource not accessible')) : Promise.resolve();
    },
  };
  return { forge, calls };
}

/** A workspace that pushes the review branch and finds the base at `syncedSha` once merged. */
const workspace = (syncedSha = 'f'.repeat(40)) =>
  ({
    pushBranch: () => Promise.resolve({ sha: PUSHED, attempts: 1 }),
    syncTo: () => Promise.resolve(syncedSha),
  }) as unknown as GitWorkspace;

const pass = (): DeliverPassRequest => ({
  workspace: workspace(),
  runId: 'run-1',
  cluster: { name: 'eu-2' },
  pass: 'infrastructure',
  branch: 'main',
  summary: { written: ['clusters/eu-2/flux/infrastructure.yaml'], removed: [], verify: 'passed: no findings' },
  maxAttempts: 3,
});

/** Delivers a review through `delivery`, collecting in `events` what the caller is told of its request. */
async function deliverReview(delivery: PullRequestDelivery, options: { readonly syncedSha?: string; readonly events?: ReviewRequestRef[] } = {}) {
  const events = options.events ?? [];
  const result = await delivery.deliverReview({
    workspace: workspace(options.syncedSha),
    branch: 'main',
    head: HEAD,
    title: 'eu-2: infrastructure layer',
    body: 'Opened by gitops-scaffolder.',
    labels: ['gitops-scaffolder'],
    subject: 'pass infrastructure',
    unmerged: 'rerun to open a new one',
    fields: { pass: 'infrastructure' },
    onRequest: (ref) => void events.push(ref),
  });
  return { result, events };
}

const merged = request({ state: 'merged', mergeSha: 'c'.repeat(40) });

describe('pull_request delivery', () => {
  it('opens the pass’s request on its own branch, waits for the merge, and records the merge commit', async () => {
    const { forge, calls } = scriptedForge({ reads: [merged] });
    const delivery = new PullRequestDelivery({ forge, pollIntervalMs: 1 });
    const result = await delivery.deliver(pass());
    assert.deepEqual(
      calls.open.map((o) => [o.head, o.base, o.labels]),
      [[HEAD, 'main', ['gitops-scaffolder', 'scaffold-pass:infrastructure']]],
    );
    assert.deepEqual(result, { sha: 'c'.repeat(40), attempts: 1, request: { number: 7, url: URL, state: 'merged' } });
    assert.deepEqual(calls.deleted, [HEAD], 'the merged branch is removed');
  });

  it('reuses the request an earlier attempt left open instead of opening a second one', async () => {
    const { forge, calls } = scriptedForge({ found: request(), reads: [merged] });
    const { events } = await deliverReview(new PullRequestDelivery({ forge, pollIntervalMs: 1 }));
    assert.equal(calls.open.length, 0);
    assert.deepEqual(
      events.map((e) => e.state),
      ['open', 'merged'],
      'told of the reused request and of its merge, not of each look at it',
    );
  });

  it('records the merge commit even when the base moved on before the run caught up', async () => {
    const { forge } = scriptedForge({ reads: [merged] });
    const { result } = await deliverReview(new PullRequestDelivery({ forge, pollIntervalMs: 1 }), { syncedSha: 'd'.repeat(40) });
    assert.equal(result.sha, 'c'.repeat(40));
  });

  it('with auto_merge, merges only once the forge calls the request mergeable, and only the commit it pushed', async () => {
    const { forge, calls } = scriptedForge({
      opened: request({ mergeable: false }),
      reads: [request({ mergeable: true }), merged],
    });
    const { events } = await deliverReview(new PullRequestDelivery({ forge, autoMerge: true, pollIntervalMs: 1 }));
    assert.deepEqual(calls.merge, [[7, PUSHED]]);
    assert.deepEqual(
      events.map((e) => e.state),
      ['open', 'merged'],
    );
  });

  it('with auto_merge, does not merge a request whose head is a commit someone else pushed to the review branch: it says so and waits for a person', async () => {
    const foreign = 'e'.repeat(40);
    const { forge, calls } = scriptedForge({
      opened: request({ mergeable: true, headSha: foreign }),
      reads: [request({ mergeable: true, headSha: foreign }), request({ mergeable: true, headSha: foreign }), merged],
    });
    const logger = capturingLogger();
    const { result } = await deliverReview(new PullRequestDelivery({ forge, autoMerge: true, pollIntervalMs: 1, logger }));
    assert.deepEqual(calls.merge, [], 'the service token merged a head the run never verified');
    assert.equal(result.sha, 'c'.repeat(40), 'a person merged it: the run goes on with the merge commit');
    const warnings = logger.lines.filter((l) => l.level === 'warn' && l.fields.event === 'review_request_head');
    assert.equal(warnings.length, 1, 'said once, not at every look');
    assert.equal(warnings[0]!.fields.head, foreign);
    assert.equal(warnings[0]!.fields.pushed, PUSHED);
  });

  it('without auto_merge never merges: it waits, looking again at the poll interval', async () => {
    const { forge, calls } = scriptedForge({
      opened: request({ mergeable: true }),
      reads: [request({ mergeable: true }), request({ mergeable: true }), merged],
    });
    const started = Date.now();
    const logger = capturingLogger();
    await deliverReview(new PullRequestDelivery({ forge, pollIntervalMs: 40, logger }));
    assert.deepEqual(calls.merge, []);
    assert.deepEqual(
      logger.lines.filter((l) => l.fields.event === 'review_request').map((l) => l.fields.action),
      ['opened', 'waiting', 'merged'],
      'one event a change of state, not one a look',
    );
    assert.equal(calls.get, 3);
    assert.ok(Date.now() - started >= 80, `two pauses of 40 ms between the three looks, took ${Date.now() - started} ms`);
  });

  it('a merged pass stands when its branch cannot be deleted: a warning, not a failure', async () => {
    const { forge, calls } = scriptedForge({ reads: [merged], deleteFails: true });
    const logger = capturingLogger();
    const { result } = await deliverReview(new PullRequestDelivery({ forge, pollIntervalMs: 1, logger }));
    assert.equal(result.sha, 'c'.repeat(40));
    assert.deepEqual(calls.deleted, [HEAD]);
    assert.ok(logger.lines.some((l) => l.level === 'warn' && l.fields.branch === HEAD && l.msg === 'could not delete the merged branch'));
  });

  it('fails with ConflictError when the request is closed without being merged, and says what to do', async () => {
    const { forge, calls } = scriptedForge({ reads: [request({ state: 'closed' })] });
    const events: ReviewRequestRef[] = [];
    await assert.rejects(
      deliverReview(new PullRequestDelivery({ forge, autoMerge: true, pollIntervalMs: 1 }), { events }),
      (error: unknown) =>
        error instanceof ConflictError &&
        error.message === `request #7 for pass infrastructure (${URL}) was closed without being merged, rerun to open a new one`,
    );
    assert.deepEqual(calls.merge, []);
    assert.deepEqual(
      events.map((e) => e.state),
      ['open', 'closed'],
    );
    assert.deepEqual(calls.deleted, [], 'the branch of an unmerged request is kept');
  });
});
