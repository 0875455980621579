/**
 * What the dashboard lists of pull/merge requests (a scaffold's passes, an
 * upgrade's or a removal's one request): the forge's name for the request, its
 * state and a link only to a web page.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deliversThroughRequests, shownReviewRequests, type ReviewRequest } from '../../ui/src/review-requests.js';

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

describe('review requests of upgrade and removal runs', () => {
  it("names an upgrade's and a removal's one request by what it delivers", () => {
    const shown = shownReviewRequests({
      review_requests: [
        request({ pass: 'upgrade', branch: 'scaffold/eu-prod-1/upgrade' }),
        request({ pass: 'remove', forge: 'gitea', number: 5, url: 'https://gitea.example.net/acme/platform/pulls/5', state: 'merged' }),
      ],
    });
    assert.deepEqual(
      shown.map((r) => [r.pass, `${r.forge} ${r.label}`, r.state]),
      [
        ['The upgrade', 'GitHub #12', 'open'],
        ['The removal', 'Gitea #5', 'merged'],
      ],
    );
  });
});
