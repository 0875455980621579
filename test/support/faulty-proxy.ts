/**
 * Test support: a TCP proxy on loopback in front of a server (a git daemon),
 * which can cut the next connections as a busy forge or a flaky network does:
 * accepted, then reset before a byte is forwarded. What the client sees is the
 * real failure ("Connection reset by peer", "the remote end hung up").
 */
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';

export interface FaultyProxy {
  readonly port: number;
  /** Connections accepted so far, cut ones included. */
  readonly connections: number;
  /** Cuts the next `count` connections (Infinity: every one until told otherwise; 0: none). */
  cutNext(count: number): void;
  /** Closes the listener and every connection. Idempotent. */
  stop(): Promise<void>;
}

/** Starts a proxy to `127.0.0.1:targetPort`. */
export async function startFaultyProxy(targetPort: number): Promise<FaultyProxy> {
  let toCut = 0;
  let connections = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    connections++;
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => {});
    if (toCut > 0) {
      toCut--;
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  let stopped: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    cutNext(count) {
      toCut = count;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      });
      return stopped;
    },
  };
}
