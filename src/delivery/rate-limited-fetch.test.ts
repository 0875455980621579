/**
 * The fetch the Gitea and GitLab clients send through, against a loopback
 * server scripted to throttle or stumble: what is retried, how often, and how
 * long a forge may make a run wait.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { capturingLogger } from '../../test/support/runner.js';
import { type RecordingReply, type RecordingServer, startRecordingServer } from '../../test/support/recording-server.js';
import { rateLimitedFetch } from './rate-limited-fetch.js';

const OK: RecordingReply = { status: 200, headers: { 'content-type': 'application/json' }, body: '[]' };

describe('rateLimitedFetch', () => {
  /** What the server answers next, one reply a request; OK once the script is spent. */
  let script: RecordingReply[] = [];
  let server: RecordingServer;
  before(async () => {
    server = await startRecordingServer(() => script.shift() ?? OK);
  });
  after(async () => {
    await server.stop();
  });

  const send = (options: { readonly retries?: number; readonly maxWaitMs?: number; readonly signal?: AbortSignal } = {}) => {
    const logger = capturingLogger();
    const sent = server.requests.length;
    const { signal, ...limits } = options;
    const url = `${server.baseUrl}/api/v1/repos/acme/platform/pulls?state=open`;
    const response = rateLimitedFetch(() => new Request(url, signal ? { signal } : {}), { forge: 'gitea', logger, maxWaitMs: 20, ...limits });
    return { response, logger, requests: () => server.requests.slice(sent) };
  };

  it('retries a forge that is briefly unavailable (502, 503) and answers with its first good response', async () => {
    script = [{ status: 503 }, { status: 502 }];
    const { response, logger, requests } = send();
    assert.equal((await response).status, 200);
    assert.equal(requests().length, 3);
    assert.deepEqual(
      logger.lines.map((l) => [l.fields.kind, l.fields.status]),
      [
        ['unavailable', 503],
        ['unavailable', 502],
      ],
    );
  });

  it('gives up after `retries` retries and hands back the last answer', async () => {
    script = [{ status: 429 }, { status: 429 }, { status: 429 }];
    const { response, requests } = send({ retries: 2 });
    assert.equal((await response).status, 429);
    assert.equal(requests().length, 3, 'the first try and two retries');
    script = [];
  });

  it('waits no longer than maxWaitMs, whatever the forge asks', async () => {
    script = [{ status: 429, headers: { 'retry-after': '3600' } }];
    // A run that waited the hour asked would be stopped here, failing the test.
    const { response, logger } = send({ maxWaitMs: 50, signal: AbortSignal.timeout(3000) });
    assert.equal((await response).status, 200);
    assert.equal(logger.lines[0]?.fields.kind, 'rate_limit');
  });

  it('takes a 403 without a rate-limit header for the refusal it is: no retry', async () => {
    script = [{ status: 403, headers: { 'content-type': 'application/json' }, body: '{"message":"forbidden"}' }];
    const { response, logger, requests } = send();
    assert.equal((await response).status, 403);
    assert.equal(requests().length, 1);
    assert.deepEqual(logger.lines, []);
  });
});
