/**
 * The Gitea client where the contract's forge double is too small to tell:
 * a repository with more open pull requests than one page holds, and pulls
 * from forks.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type RecordedRequest, type RecordingServer, startRecordingServer } from '../../test/support/recording-server.js';
import { GiteaForge } from './gitea-forge.js';

/** `count` open pulls from `feature/<n>` into main, newest first as Gitea lists them. */
function openPulls(count: number, baseUrl: string) {
  return Array.from({ length: count }, (_, i) => ({
    number: count - i,
    html_url: `${baseUrl}/acme/platform-gitops/pulls/${count - i}`,
    state: 'open',
    merged: false,
    mergeable: true,
    head: { ref: count - i === 3 ? 'scaffold/eu-2/all' : `feature/${count - i}`, sha: 'a'.repeat(40), repo_id: 1 },
    base: { ref: 'main', repo_id: 1 },
  }));
}

describe('GiteaForge with many open pull requests', () => {
  let server: RecordingServer;
  let pulls: ReturnType<typeof openPulls> = [];
  before(async () => {
    server = await startRecordingServer((request: RecordedRequest) => {
      const url = new URL(request.path, 'http://127.0.0.1');
      const page = Number(url.searchParams.get('page'));
      const limit = Number(url.searchParams.get('limit'));
      const body = JSON.stringify(pulls.slice((page - 1) * limit, page * limit));
      return { status: 200, headers: { 'content-type': 'application/json' }, body };
    });
  });
  after(async () => {
    await server.stop();
  });
  const client = () => new GiteaForge({ apiUrl: `${server.baseUrl}/api/v1`, owner: 'acme', repo: 'platform-gitops', token: 'gitea-token-0123456789' });

  it('finds its open request on a later page, so a rerun does not open a second one', async () => {
    pulls = openPulls(120, server.baseUrl);
    const sent = server.requests.length;
    const found = await client().findOpen('scaffold/eu-2/all', 'main');
    assert.equal(found?.number, 3);
    assert.equal(found?.state, 'open');
    assert.deepEqual(
      server.requests.slice(sent).map((r) => r.path),
      [1, 2, 3].map((page) => `/api/v1/repos/acme/platform-gitops/pulls?state=open&limit=50&page=${page}`),
    );
  });

  it('does not take a fork’s pull from a branch of the same name for its own', async () => {
    const fork = { ...openPulls(1, server.baseUrl)[0]!, number: 200, head: { ref: 'scaffold/eu-2/all', sha: 'f'.repeat(40), repo_id: 99 } };
    pulls = [fork, ...openPulls(10, server.baseUrl)];
    const found = await client().findOpen('scaffold/eu-2/all', 'main');
    assert.deepEqual([found?.number, found?.headSha], [3, 'a'.repeat(40)]);
    pulls = [fork];
    assert.equal(await client().findOpen('scaffold/eu-2/all', 'main'), undefined);
  });

  it('stops at the first page that is not full', async () => {
    pulls = openPulls(60, server.baseUrl).filter((p) => p.head.ref !== 'scaffold/eu-2/all');
    const sent = server.requests.length;
    assert.equal(await client().findOpen('scaffold/eu-2/all', 'main'), undefined);
    assert.equal(server.requests.length - sent, 2);
  });
});
