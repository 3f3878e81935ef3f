import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook stub on 127.0.0.1 whose answer depends on the alert's user. */
export interface StatusReceiver {
  /** `http://127.0.0.1:PORT/webhooks/churn-risk` */
  url: string;
  /** The user ids of the alerts received, in order of arrival (duplicates included). */
  received: string[];
  /** Users whose alerts are answered 500 (the rest get 202). */
  failing: Set<string>;
  close(): Promise<void>;
}

/** Starts a webhook stub that answers 500 for users in `failing`, 202 for the rest. */
export async function startStatusReceiver(): Promise<StatusReceiver> {
  const received: string[] = [];
  const failing = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let userId = '';
      try {
        userId = String(
          (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { userId?: unknown }).userId,
        );
      } catch {
        // not JSON: counted under ''
      }
      received.push(userId);
      const status = failing.has(userId) ? 500 : 202;
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/churn-risk`,
    received,
    failing,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
