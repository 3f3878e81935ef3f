import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedRequest {
  /** The sandbox clock's time when it arrived. */
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A tiny webhook endpoint on 127.0.0.1 that records requests and answers `statusFor(n, request)`
 * to the n-th (0-based).
 */
export interface TestReceiver {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startReceiver(
  statusFor: (n: number, request: ReceivedRequest) => number,
  now: () => number = Date.now,
): Promise<TestReceiver> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const n = received.length;
      const entry = {
        at: now(),
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      response
        .writeHead(statusFor(n, entry), { 'content-type': 'application/json' })
        .end('{"received":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/churn-risk`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
