import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type RecordingServer, startRecordingServer } from '../test/support/recording-server.js';
import { HEADERS_KEPT_ACROSS_ORIGINS, RedirectRefusedError, redirectSafeFetch } from './redirect-safe-fetch.js';

/** A server that redirects `/hop/<n>/<rest>` n times to itself, then `/away/<rest>` to `target()`. */
async function startRedirector(target: () => string, status = 307): Promise<RecordingServer> {
  return startRecordingServer((request) => {
    const hop = /^\/hop\/(\d+)(\/.*)$/.exec(request.path);
    if (hop) {
      const left = Number(hop[1]);
      return { status, headers: { location: left > 1 ? `/hop/${left - 1}${hop[2]}` : hop[2]! } };
    }
    if (request.path.startsWith('/away')) return { status, headers: { location: `${target()}${request.path.slice('/away'.length)}` } };
    return { status: 200, body: 'here' };
  });
}

describe('redirectSafeFetch', () => {
  let other: RecordingServer;
  let origin: RecordingServer;
  before(async () => {
    other = await startRecordingServer();
    origin = await startRedirector(() => other.baseUrl);
  });
  after(async () => {
    await origin.stop();
    await other.stop();
  });

  it('keeps every header, credentials included, on a redirect within the origin', async () => {
    const send = redirectSafeFetch({ client: 'test', crossOrigin: 'refuse' });
    const response = await send(`${origin.baseUrl}/hop/2/done`, { headers: { 'private-token': 'glpat-secret', authorization: 'Bearer t' } });
    assert.equal(response.status, 200);
    const last = origin.requests.at(-1)!;
    assert.equal(last.path, '/done');
    assert.equal(last.headers['private-token'], 'glpat-secret');
    assert.equal(last.headers['authorization'], 'Bearer t');
  });

  it('drops every header outside the allowlist on a redirect to another origin, whatever its name', async () => {
    const send = redirectSafeFetch({ client: 'test', crossOrigin: 'drop-credentials' });
    const headerName = fc
      .stringMatching(/^[a-z][a-z0-9-]{0,24}$/)
      .filter(
        (name) =>
          !HEADERS_KEPT_ACROSS_ORIGINS.has(name) &&
          !['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer'].includes(name),
      );
    const secret = fc.stringMatching(/^[A-Za-z0-9]{12,40}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(headerName, secret), { minLength: 1, maxLength: 6, selector: ([name]) => name }),
        fc.constantFrom('GET', 'PUT', 'HEAD'),
        async (credentials, method) => {
          const seen = other.requests.length;
          const headers = {
            ...Object.fromEntries(credentials),
            authorization: 'Bearer a',
            cookie: 's=b',
            'proxy-authorization': 'Basic c',
            'private-token': 'd',
            accept: 'application/json',
          };
          const response = await send(`${origin.baseUrl}/hop/1/away/blob?sig=1`, { method, headers, ...(method === 'PUT' ? { body: 'bytes' } : {}) });
          await response.arrayBuffer();
          const arrived = other.requests.slice(seen);
          assert.equal(arrived.length, 1);
          const got = arrived[0]!;
          assert.equal(got.path, '/blob?sig=1');
          assert.equal(got.method, method);
          assert.equal(got.headers['accept'], 'application/json', 'an allowlisted header goes along');
          for (const [name, value] of [
            ...credentials,
            ['authorization', 'a'],
            ['cookie', 'b'],
            ['proxy-authorization', 'c'],
            ['private-token', 'd'],
          ] as const) {
            assert.equal(got.headers[name], undefined, `${name} reached the other origin`);
            assert.ok(!JSON.stringify(got.headers).includes(value) || value.length < 12, `a value of ${name} reached the other origin`);
          }
          if (method === 'PUT') assert.equal(got.body, 'bytes', 'a 307 sends the body again');
        },
      ),
      { numRuns: 25 },
    );
  });

  it('does not take credentials back when a later hop returns to the first origin', async () => {
    const back = await startRedirector(() => origin.baseUrl);
    try {
      const send = redirectSafeFetch({ client: 'test', crossOrigin: 'drop-credentials' });
      const response = await send(`${back.baseUrl}/away/done`, { headers: { 'private-token': 'glpat-secret' } });
      assert.equal(response.status, 200);
      assert.equal(origin.requests.at(-1)!.path, '/done');
      assert.equal(origin.requests.at(-1)!.headers['private-token'], undefined);
    } finally {
      await back.stop();
    }
  });

  it('refuses a redirect to another origin without contacting it, naming no query', async () => {
    const seen = other.requests.length;
    const send = redirectSafeFetch({ client: 'GitLab', crossOrigin: 'refuse' });
    await assert.rejects(send(`${origin.baseUrl}/away/api?private_token=glpat-secret`, { headers: { 'private-token': 'glpat-secret' } }), (error: Error) => {
      assert.ok(error instanceof RedirectRefusedError);
      assert.match(error.message, new RegExp(`^GitLab: GET ${origin.baseUrl}/away/api was redirected to ${other.baseUrl}/api; another origin`));
      assert.doesNotMatch(error.message, /glpat-secret/);
      return true;
    });
    assert.equal(other.requests.length, seen);
  });

  it('stops after maxRedirects hops', async () => {
    const send = redirectSafeFetch({ client: 'test', crossOrigin: 'refuse', maxRedirects: 3 });
    assert.equal((await send(`${origin.baseUrl}/hop/3/done`)).status, 200);
    await assert.rejects(send(`${origin.baseUrl}/hop/4/done`), /not following more than 3 redirects/);
  });

  it('continues a POST redirected with 303 as a GET without its body', async () => {
    const seeOther = await startRedirector(() => other.baseUrl, 303);
    try {
      const send = redirectSafeFetch({ client: 'test', crossOrigin: 'drop-credentials' });
      await (await send(`${seeOther.baseUrl}/away/result`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } })).arrayBuffer();
      const got = other.requests.at(-1)!;
      assert.equal(got.method, 'GET');
      assert.equal(got.body, '');
      assert.equal(got.headers['content-type'], undefined);
    } finally {
      await seeOther.stop();
    }
  });

  it('never follows https to plain http', async () => {
    const fake: typeof fetch = (input) =>
      Promise.resolve(
        String(input).startsWith('https:')
          ? new Response(null, { status: 302, headers: { location: 'http://storage.example.test/blob' } })
          : new Response('plain'),
      );
    const send = redirectSafeFetch({ client: 'registry r', crossOrigin: 'drop-credentials', fetch: fake });
    await assert.rejects(send('https://r.example.test/v2/x'), /an https request is not followed to plain http/);
  });
});
