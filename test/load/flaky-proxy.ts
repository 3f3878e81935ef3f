/**
 * A small node:http proxy that injects failures in front of a real service: 500s, 429s, connection
 * resets and slow answers, some of them AFTER the request was forwarded (the service applied it,
 * the client saw a failure: what idempotency keys are for). Which fault a request gets is decided
 * by the caller's `decide`, from the request's content and how often its idempotency key was seen.
 */
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { closeServer, listenLocal } from '../conformance/http-client.js';
import { forward, readAll, relayedHeaders } from './http-relay.js';

/** What the proxy does with one request. */
export type Fault =
  /** Forward and relay the answer. */
  | 'pass'
  /** Forward, then relay the answer after a short wait (within the client's time-out). */
  | 'slow'
  /** Answer 500 without forwarding. */
  | 'error-500'
  /** Answer 429 with `Retry-After: 0` without forwarding. */
  | 'error-429'
  /** Reset the connection without forwarding. */
  | 'reset'
  /** Forward (the service applies it), then answer 500 instead of the service's answer. */
  | 'applied-then-500'
  /** Forward (the service applies it), then reset the connection. */
  | 'applied-then-reset'
  /** Hold the request past the client's time-out, then forward it: it lands after the client gave up. */
  | 'late';

export const FAULTS: readonly Fault[] = [
  'pass',
  'slow',
  'error-500',
  'error-429',
  'reset',
  'applied-then-500',
  'applied-then-reset',
  'late',
];

/** The request as `decide` sees it. */
export interface ProxiedRequest {
  method: string;
  path: string;
  body: string;
  idempotencyKey: string | undefined;
  /** 0 for the first request with this idempotency key (or this body, without a key), then 1... */
  attempt: number;
}

export interface FlakyProxyOptions {
  /** The service's base URL (http://127.0.0.1:port). */
  target: string;
  decide: (request: ProxiedRequest) => Fault;
  /** Extra wait of a `slow` answer, ms. */
  slowMs: number;
  /** Hold time of a `late` request, ms (longer than the client's time-out). */
  lateMs: number;
}

export interface FlakyProxy {
  url: string;
  /** How many requests got each fault. */
  readonly faults: Readonly<Record<Fault, number>>;
  /** Answers of the service marked `idempotent-replayed: true` (a retry that was not applied again). */
  readonly replays: number;
  /** Resolves when no request is being held or forwarded. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1. */
export async function createFlakyProxy(options: FlakyProxyOptions): Promise<FlakyProxy> {
  const faults = Object.fromEntries(FAULTS.map((fault) => [fault, 0])) as Record<Fault, number>;
  const seen = new Map<string, number>();
  const upstream = new Agent({ keepAlive: true, maxSockets: 16 });
  const target = new URL(options.target);
  let replays = 0;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const answer = (
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: string | Buffer,
  ) => {
    if (res.destroyed || res.headersSent) return; // the client gave up (time-out)
    res.writeHead(status, headers);
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readAll(req);
    const text = body.toString('utf8');
    const keyHeader = req.headers['idempotency-key'];
    const idempotencyKey = typeof keyHeader === 'string' ? keyHeader : undefined;
    const seenKey = idempotencyKey ?? `body:${text}`;
    const attempt = seen.get(seenKey) ?? 0;
    seen.set(seenKey, attempt + 1);
    const fault = options.decide({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      body: text,
      idempotencyKey,
      attempt,
    });
    faults[fault]++;

    const json = { 'content-type': 'application/json' };
    if (fault === 'error-500') {
      answer(res, 500, json, '{"error":{"code":"SERVER_ERROR","message":"injected"}}');
      return;
    }
    if (fault === 'error-429') {
      answer(
        res,
        429,
        { ...json, 'retry-after': '0' },
        '{"error":{"code":"RATE_LIMITED","message":"injected"}}',
      );
      return;
    }
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === 'late') await delay(options.lateMs);
    const forwarded = await forward(upstream, target, req, body);
    if (forwarded.headers['idempotent-replayed'] === 'true') replays++;
    if (fault === 'applied-then-500') {
      answer(res, 500, json, '{"error":{"code":"SERVER_ERROR","message":"injected after apply"}}');
      return;
    }
    if (fault === 'applied-then-reset') {
      req.socket.destroy();
      return;
    }
    if (fault === 'slow') await delay(options.slowMs);
    answer(res, forwarded.status, relayedHeaders(forwarded.headers), forwarded.body);
  };

  const server = createServer((req, res) => {
    inFlight++;
    handle(req, res)
      .catch(() => {
        if (!res.destroyed) req.socket.destroy();
      })
      .finally(() => {
        inFlight--;
        if (inFlight === 0) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const wake of waiters) wake();
        }
      });
  });
  const url = await listenLocal(server);
  return {
    url,
    faults,
    get replays() {
      return replays;
    },
    idle: () =>
      inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve)),
    close: async () => {
      await closeServer(server);
      upstream.destroy();
    },
  };
}
