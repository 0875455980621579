/**
 * A loopback HTTP server that records every request it receives (method, path,
 * headers, body) and answers each with `reply` (200 `{}` unless told): the
 * "other origin" a redirect points at, to see what a client sent there.
 */
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface RecordingServer {
  /** `http://127.0.0.1:PORT`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** TCP connections accepted so far, whether or not a request followed (a probe that only connects counts). */
  readonly connections: number;
  stop(): Promise<void>;
}

export interface RecordingReply {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export async function startRecordingServer(
  reply: (request: RecordedRequest) => RecordingReply = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' }),
): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      const answer = reply(recorded);
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
    });
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
