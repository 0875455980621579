/**
 * The GitLab client where the contract's forge double does not reach: a
 * project in a subgroup, and the answers GitLab gives a merge it will not
 * make now (405, 422) as against one it refuses for good.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ForbiddenError } from '../errors.js';
import { type RecordingReply, type RecordingServer, startRecordingServer } from '../../test/support/recording-server.js';
import { GitLabForge } from './gitlab-forge.js';

const TOKEN = 'glpat-0123456789abcdef';
const json = (status: number, body: unknown): RecordingReply => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('GitLabForge', () => {
  let server: RecordingServer;
  let reply: RecordingReply = json(200, {});
  before(async () => {
    server = await startRecordingServer(() => reply);
  });
  after(async () => {
    await server.stop();
  });
  const client = () => new GitLabForge({ apiUrl: server.baseUrl, projectPath: 'platform/eu/gitops', token: TOKEN });

  it('does not take a fork’s merge request from a branch of the same name for its own', async () => {
    const mr = (iid: number, sourceProject: number) => ({
      iid,
      web_url: `${server.baseUrl}/platform/eu/gitops/-/merge_requests/${iid}`,
      state: 'opened',
      sha: String(iid).repeat(40).slice(0, 40),
      source_project_id: sourceProject,
      target_project_id: 11,
      source_branch: 'scaffold/eu-2/all',
      target_branch: 'main',
    });
    reply = json(200, [mr(9, 99), mr(4, 11)]);
    assert.equal((await client().findOpen('scaffold/eu-2/all', 'main'))?.number, 4);
    reply = json(200, [mr(9, 99)]);
    assert.equal(await client().findOpen('scaffold/eu-2/all', 'main'), undefined);
  });

  it('merges in a subgroup’s project the head it was given, with the token in its header only', async () => {
    reply = json(200, { iid: 7, web_url: `${server.baseUrl}/platform/eu/gitops/-/merge_requests/7`, state: 'merged', sha: 'a'.repeat(40) });
    const sent = server.requests.length;
    assert.equal(await client().merge(7, 'a'.repeat(40)), true);
    const [merge] = server.requests.slice(sent);
    assert.equal(merge?.method, 'PUT');
    assert.equal(merge?.path.split('?')[0], '/api/v4/projects/platform%2Feu%2Fgitops/merge_requests/7/merge');
    assert.equal(merge?.headers['private-token'], TOKEN);
    assert.doesNotMatch(merge?.path ?? '', new RegExp(TOKEN));
    assert.match(`${merge?.path} ${merge?.body}`, /a{40}/, 'the sha the run read goes with the merge');
  });

  it('reads a merge GitLab cannot make yet (405, 422) as "not now", to look again later', async () => {
    for (const [status, message] of [
      [405, '405 Method Not Allowed'],
      [422, 'Branch cannot be merged'],
      [409, 'SHA does not match HEAD of source branch'],
    ] as const) {
      reply = json(status, { message });
      assert.equal(await client().merge(7, 'a'.repeat(40)), false, String(status));
    }
  });

  it('fails on a merge refused for good, without the token in the error', async () => {
    reply = json(403, { message: '403 Forbidden' });
    await assert.rejects(
      client().merge(7, 'a'.repeat(40)),
      (error: unknown) =>
        error instanceof ForbiddenError && /GitLab merging merge request !7 failed \(HTTP 403\)/.test(error.message) && !error.message.includes(TOKEN),
    );
  });
});
