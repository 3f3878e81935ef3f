/**
 * A real local HTTP server for the client's and batcher's tests (node:http on 127.0.0.1, port 0).
 * Each request is recorded; replies come from a queue, then from a default handler.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query exactly as sent (percent-encoding kept). */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

/** What the server answers: a response, a destroyed socket, or nothing at all. */
export type Reply =
  | { status: number; headers?: Record<string, string>; body?: unknown; raw?: string }
  | { destroy: true }
  | { hang: true };

export type Handler = (request: RecordedRequest) => Reply | Promise<Reply>;

export const API_KEY = 'sk_test_secret_key_123';

export interface FakeService {
  url: string;
  requests: RecordedRequest[];
  /** Queues replies for the next requests, in order. */
  reply(...replies: (Reply | Handler)[]): void;
  /** Resolves when the server has received `count` requests in all. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

function send(res: import('node:http').ServerResponse, reply: Reply): void {
  if ('destroy' in reply) {
    res.socket?.destroy();
    return;
  }
  if ('hang' in reply) return;
  const text = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  res.writeHead(reply.status, {
    ...(text === '' ? {} : { 'content-type': 'application/json' }),
    ...reply.headers,
  });
  res.end(text);
}

export async function startFakeService(
  fallback: Handler = () => ({ status: 200, body: {} }),
): Promise<FakeService> {
  const requests: RecordedRequest[] = [];
  const queue: (Reply | Handler)[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = req.url ?? '/';
      const parsed = new URL(url, 'http://127.0.0.1');
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url,
        path: parsed.pathname,
        query: parsed.searchParams,
        headers: req.headers,
        body,
        json,
      };
      requests.push(recorded);
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) waiter.resolve();
      const next = queue.shift() ?? fallback;
      void Promise.resolve(typeof next === 'function' ? next(recorded) : next).then((reply) => {
        send(res, reply);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => queue.push(...replies),
    waitForRequests: (count) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** A sleep that records each delay and returns at once (unless the signal is already aborted). */
export function recordingSleep(): {
  delays: number[];
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
} {
  const delays: number[] = [];
  return {
    delays,
    sleep: (ms, signal) => {
      delays.push(ms);
      return signal?.aborted ? Promise.reject(signal.reason as Error) : Promise.resolve();
    },
  };
}
