/**
 * What the dashboard lists of pull/merge requests (a run's passes, an upgrade
 * rollout's waves, a removal): the forge's name for the request, its state and
 * a link only to a web page.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deliversThroughRequests, rolloutDeliversThroughRequests, shownRemovalRequest, shownReviewRequests, shownWaveRequests, type ReviewRequest } from '../../ui/src/review-requests.js';

const request = (fields: Partial<ReviewRequest>): ReviewRequest => ({
  pass: 'infrastructure',
  forge: 'github',
  number: 12,
  url: 'https://github.com/acme/platform/pull/12',
  state: 'open',
  updated_at: '2026-03-04T05:06:07.000Z',
  ...fields,
});

describe('review requests on the run page', () => {
  it('names each pass and request the way its forge does, with its state and a link', () => {
    const shown = shownReviewRequests({
      review_requests: [
        request({ state: 'merged', branch: 'scaffold/eu-prod-1/infrastructure' }),
        request({ pass: 'all', forge: 'gitlab', number: 4, url: 'https://gitlab.example.net/platform/gitops/-/merge_requests/4' }),
      ],
    });
    assert.deepEqual(
      shown.map((r) => [r.pass, `${r.forge} ${r.label}`, r.state, r.href, r.branch]),
      [
        ['Pass 1: infrastructure layer', 'GitHub #12', 'merged', 'https://github.com/acme/platform/pull/12', 'scaffold/eu-prod-1/infrastructure'],
        ['Pass 2: all layers', 'GitLab !4', 'open', 'https://gitlab.example.net/platform/gitops/-/merge_requests/4', undefined],
      ],
    );
  });

  it('links nothing that is not an http(s) page', () => {
    const [shown] = shownReviewRequests({ review_requests: [request({ forge: 'gitea', url: 'javascript:alert(1)' })] });
    assert.equal(shown?.href, undefined);
    assert.equal(shown?.label, '#12');
  });

  it('has a place for requests on a pull_request run before the first one is opened, and none for a push run', () => {
    assert.equal(deliversThroughRequests({ delivery: { mode: 'pull_request', auto_merge: false, forge: 'github' }, review_requests: [] }), true);
    assert.equal(deliversThroughRequests({ delivery: { mode: 'push', auto_merge: false }, review_requests: [] }), false);
    // An older service sends neither field.
    assert.equal(deliversThroughRequests({}), false);
    assert.deepEqual(shownReviewRequests({}), []);
  });
});

describe('review requests of fleet changes', () => {
  const waves = [['eu-prod-1'], ['eu-prod-2', 'us-prod-1']];

  it("lists each wave's request in wave order, named the way the rollout's forge names it, with its clusters and state", () => {
    const shown = shownWaveRequests({
      delivery: { mode: 'pull_request', auto_merge: false, forge: 'gitlab' },
      waves,
      // As the API sends them, but out of order: the page still lists wave 1 first.
      requests: [
        { wave: 1, number: 8, url: 'https://gitlab.example.net/platform/gitops/-/merge_requests/8', state: 'open' },
        { wave: 0, number: 7, url: 'https://gitlab.example.net/platform/gitops/-/merge_requests/7', state: 'merged' },
      ],
    });
    assert.deepEqual(
      shown.map((r) => [r.wave, r.clusters.join(','), `${r.forge} ${r.label}`, r.state, r.href]),
      [
        ['Wave 1', 'eu-prod-1', 'GitLab !7', 'merged', 'https://gitlab.example.net/platform/gitops/-/merge_requests/7'],
        ['Wave 2', 'eu-prod-2,us-prod-1', 'GitLab !8', 'open', 'https://gitlab.example.net/platform/gitops/-/merge_requests/8'],
      ],
    );
    assert.notEqual(shown[0]?.key, shown[1]?.key);
  });

  it('links no wave request that is not a web page, and has a place for requests only on a pull_request rollout', () => {
    const [shown] = shownWaveRequests({ delivery: { mode: 'pull_request', auto_merge: true, forge: 'github' }, waves, requests: [{ wave: 0, number: 3, url: 'javascript:alert(1)', state: 'closed' }] });
    assert.equal(shown?.href, undefined);
    assert.equal(shown?.label, '#3');
    assert.equal(rolloutDeliversThroughRequests({ delivery: { mode: 'pull_request', auto_merge: false, forge: 'gitea' }, waves, requests: [] }), true);
    assert.equal(rolloutDeliversThroughRequests({ delivery: { mode: 'push', auto_merge: false }, waves, requests: [] }), false);
    // A rollout read from a service older than delivery: no section, no requests.
    assert.equal(rolloutDeliversThroughRequests({ waves }), false);
    assert.deepEqual(shownWaveRequests({ waves }), []);
  });

  it('shows the request a removal went through, and none for a pushed removal', () => {
    const shown = shownRemovalRequest({ delivery: { mode: 'pull_request', auto_merge: true, forge: 'gitea' }, request: { number: 5, url: 'https://gitea.example.net/acme/platform/pulls/5', state: 'merged' } });
    assert.deepEqual([shown?.forge, shown?.label, shown?.state, shown?.href], ['Gitea', '#5', 'merged', 'https://gitea.example.net/acme/platform/pulls/5']);
    assert.equal(shownRemovalRequest({ delivery: { mode: 'push', auto_merge: false } }), undefined);
  });
});
