import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { PgRunStore } from '../db/pg-run-store.js';
import type { RunExecutor } from '../service/run-executor.js';
import { RunService } from '../service/run-service.js';
import { StaticTokenAuthenticator } from '../service/static-token-authenticator.js';
import { createHttpApp } from './create-http-app.js';

const TOKEN = 'test-token-0123456789abcdef';
const TIMEOUT_MS = 400;
// Only a failure bound: a connection still open by then was never going to be closed.
const GIVE_UP_MS = 15_000;

/** Requests here never reach a handler: the executor is never asked anything. */
const unusedExecutor: RunExecutor = {
  start: () => Promise.reject(new Error('not used')),
  inspect: () => Promise.reject(new Error('not used')),
  logs: () => {
    throw new Error('not used');
  },
  cancel: () => Promise.reject(new Error('not used')),
};

let store: PgRunStore;
let app: FastifyInstance;
let port: number;

before(async () => {
  store = await PgRunStore.open();
  const service = new RunService({
    store,
    executor: unusedExecutor,
    previewer: { preview: () => Promise.reject(new Error('not used')) },
    reference: 'development',
  });
  app = await createHttpApp({ service, authenticator: new StaticTokenAuthenticator([TOKEN]), store, requestTimeoutMs: TIMEOUT_MS });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  port = address.port;
});
after(async () => {
  await app.close();
  await store.close();
});

interface Ended {
  /** Everything the server sent before the connection ended. */
  readonly received: string;
  /** From the last byte the client wrote to the end of the connection. */
  readonly afterStallMs: number;
}

/** Opens a raw connection, writes `chunks`, then sends nothing more and waits for the server to end it. */
async function stallAfter(chunks: readonly string[]): Promise<Ended> {
  const socket: Socket = connect({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.setEncoding('utf8').on('data', (data: string) => (received += data));
  socket.on('error', () => undefined); // a reset after the 408 is still the end we wait for
  for (const chunk of chunks) await new Promise<void>((resolve, reject) => socket.write(chunk, (error) => (error ? reject(error) : resolve())));
  const stalled = performance.now();
  let giveUp: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      new Promise<Ended>((resolve) => socket.once('close', () => resolve({ received, afterStallMs: performance.now() - stalled }))),
      new Promise<never>((_, reject) => {
        giveUp = setTimeout(() => reject(new Error(`the server kept a stalled connection open for ${GIVE_UP_MS} ms`)), GIVE_UP_MS);
      }),
    ]);
  } finally {
    clearTimeout(giveUp);
    socket.destroy();
  }
}

const BODY = JSON.stringify({ cluster: { name: 'eu-prod-1', domain: 'eu-prod-1.example.net', region: 'eu-west-1' }, kubeconfig: { inline: 'x' } });
const headers = (contentLength: number) =>
  `POST /api/v1/scaffolds HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;

// Slack for a loaded machine on top of Node's check interval (a tenth of the timeout).
const closedInTime = (ended: Ended) => {
  assert.ok(ended.afterStallMs >= TIMEOUT_MS * 0.9, `closed after ${ended.afterStallMs.toFixed(0)} ms, before the timeout`);
  assert.ok(ended.afterStallMs < TIMEOUT_MS * 5, `closed only after ${ended.afterStallMs.toFixed(0)} ms`);
};

describe('a client that stalls its request', () => {
  it('gets 408 and a closed connection when it stops halfway through its body', async () => {
    const ended = await stallAfter([headers(BODY.length), BODY.slice(0, 20)]);
    assert.match(ended.received, /^HTTP\/1\.1 408 /);
    closedInTime(ended);
  });

  it('is cut off when it stops halfway through its headers', async () => {
    const ended = await stallAfter([headers(BODY.length).slice(0, 40)]);
    assert.match(ended.received, /^HTTP\/1\.1 408 /);
    closedInTime(ended);
  });

  it('a whole request on the same server is answered as usual, not with 408', async () => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    socket.setEncoding('utf8').on('data', (data: string) => (received += data));
    // An invalid kubeconfig: validation answers without any run being started.
    socket.end(`${headers(BODY.length).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')}${BODY}`);
    await new Promise((resolve) => socket.once('close', resolve));
    assert.match(received, /^HTTP\/1\.1 400 /);
  });
});
