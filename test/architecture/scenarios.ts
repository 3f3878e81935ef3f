/**
 * The receivers whose walks walk-child.ts measures, one delivery each, with the defaults (one
 * handler, no logger, no `onError`; a Redis prefix or Postgres schema of its own per run):
 *
 * - `memory`: `createReceiver({ secret })` behind the Express adapter on a listening server.
 * - `redis`, `postgres`: the same, on `createRedisQueue` / `createPostgresQueue`, one process that
 *   accepts and consumes (the web and the worker process of a deployment together: the union of
 *   their walks). Set up = created, handler registered, the consuming loop started and waiting.
 * - `cloudflare`: `createQueueWorker` in Node (workerd's coverage cannot be read from here): the
 *   worker's `fetch` with a Web `Request`, then its `queue` consumer with the message the producer
 *   got, as a `MessageBatch`. D1 is real (miniflare's bindings, SQLite in workerd); the producer
 *   and the batch are stand-ins of this file. Set up = the isolate's receiver built by a consumer
 *   call with an empty batch (as an isolate's first invocation builds it).
 *
 * Variants: `succeeds` (the handler resolves) and `fails` (it rejects on its first try: the retry
 * policy's default gives a `retry` verdict, applied with a timer in memory, stored as a retry by
 * the durable stores, sent again with a delay on Cloudflare Queues).
 *
 * The delivery ends when the response was read and the handler's verdict was applied (in memory,
 * when the handler settled; durable stores, when the verdict's write resolved, seen through a
 * wrapper of the store's method; Cloudflare, when the consumer call resolved), then a few turns
 * of the event loop for what follows in the same breath.
 */
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createMiddleware } from '@churn-risk/express';
import express from 'express';
import { request as httpRequest, type Server } from 'node:http';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

/** What walk-child.ts hands a scenario: the coverage window's ends. */
export interface CoverageWindow<C> {
  /** Just before the delivery: the counts so far are thrown away. */
  start(): Promise<void>;
  /** Once the delivery is over: the counts of the window. */
  stop(): Promise<C>;
}

/** What a scenario measured. */
export interface ScenarioOutcome<C> {
  coverage: C;
  /** The status the delivery was answered with. */
  status: number;
  /** How often the handler ran in the window (1). */
  handlerRuns: number;
}

const SECRET = 'whsec_architecture_walk_3e9d';
/** The methods of an `AlertStore` that write a try's verdict. */
const VERDICT_METHODS = ['complete', 'completeAndTake', 'scheduleRetry', 'fail'] as const;

/** A promise and its resolve function. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A few turns of the event loop: what the last step started synchronously or by microtask. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await nextTurn();
}

/**
 * The handler of every scenario; `ran` resolves once it settled (a `fails` handler rejects on its
 * first try only, so that a retry that came early would be seen as a second run).
 */
function handlerOf(variant: string): {
  handler: () => Promise<void>;
  ran: Promise<void>;
  runs: () => number;
} {
  if (variant !== 'succeeds' && variant !== 'fails') throw new Error(`unknown variant ${variant}`);
  const settled = deferred();
  let runs = 0;
  const handler = async (): Promise<void> => {
    runs += 1;
    await Promise.resolve();
    setImmediate(settled.resolve);
    if (variant === 'fails' && runs === 1) throw new Error('CRM down');
  };
  return { handler, ran: settled.promise, runs: () => runs };
}

/**
 * Wraps the methods `names` of `store` (those it has; at least one): resolves once a call of one
 * of them was made (`called`) or went through (`resolved`). The store's own code runs unchanged.
 */
function watchStore(
  store: object,
  names: readonly string[],
  when: 'called' | 'resolved',
): Promise<void> {
  const seen = deferred();
  const methods = store as Record<string, unknown>;
  const present = names.filter((name) => typeof methods[name] === 'function');
  if (present.length === 0) throw new Error(`the store has none of ${names.join(', ')}`);
  for (const name of present) {
    const original = methods[name] as (...args: unknown[]) => unknown;
    methods[name] = function (this: unknown, ...args: unknown[]): unknown {
      const result = original.apply(this, args);
      if (when === 'called') seen.resolve();
      else void Promise.resolve(result).then(seen.resolve, () => undefined);
      return result;
    };
  }
  return seen.promise;
}

/**
 * A durable queue's store watched: `ready` once the consuming loop's first take was made and the
 * first reclaim went through (the loop then waits for work), `done` once a verdict was written.
 */
function watchDurable(store: object): { ready: Promise<void>; done: Promise<void> } {
  const reclaims = typeof (store as { reclaimExpired?: unknown }).reclaimExpired === 'function';
  const ready = Promise.all([
    watchStore(store, ['take'], 'called'),
    reclaims ? watchStore(store, ['reclaimExpired'], 'resolved') : undefined,
  ]).then(() => undefined);
  return { ready, done: watchStore(store, VERDICT_METHODS, 'resolved') };
}

/** Serves `receiver` with the Express adapter on 127.0.0.1; resolves with the server's URL. */
async function serveExpress(receiver: Receiver): Promise<{ url: string; server: Server }> {
  const app = express();
  app.post('/webhooks/churn-risk', createMiddleware(receiver));
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => {
      resolve(listening);
    });
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return { url: `http://127.0.0.1:${String(address.port)}/webhooks/churn-risk`, server };
}

/** POSTs a signed delivery (signed before the window) over a fresh connection. */
function post(
  url: string,
  delivery: { headers: Record<string, string>; body: string },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: delivery.headers, agent: false },
      (res) => {
        res.resume();
        res.once('end', () => {
          resolve(res.statusCode ?? 0);
        });
      },
    );
    req.once('error', reject);
    req.end(delivery.body);
  });
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

/** memory, redis, postgres: a receiver on `queue` behind Express, one delivery over HTTP. */
async function expressWalk<C>(
  variant: string,
  window: CoverageWindow<C>,
  queueOf: () => Promise<{
    queue?: Parameters<typeof createReceiver>[0]['queue'];
    ready?: Promise<void>;
    done?: Promise<void>;
  }>,
): Promise<ScenarioOutcome<C>> {
  const { handler, ran, runs } = handlerOf(variant);
  const { queue, ready, done } = await queueOf();
  const receiver = createReceiver(
    queue === undefined ? { secret: SECRET } : { secret: SECRET, queue },
  );
  receiver.on('churn_risk_alert', handler);
  const { url, server } = await serveExpress(receiver);
  // A durable queue's loop starts on a later microtask; its first take then waits for work (a
  // margin for the take's own round trip to the store).
  await ready;
  await sleep(queue === undefined ? 0 : 300);
  await settle();
  const delivery = createTestDelivery({ userId: `user_walk_${variant}` }, { secret: SECRET });
  await window.start();
  const status = await post(url, delivery);
  await ran;
  await done;
  await settle();
  const coverage = await window.stop();
  server.close();
  return { coverage, status, handlerRuns: runs() };
}

async function cloudflareWalk<C>(
  variant: string,
  window: CoverageWindow<C>,
): Promise<ScenarioOutcome<C>> {
  const { Miniflare } = await import('miniflare');
  const { createQueueWorker } = await import('@churn-risk/cloudflare');
  type Producer = { send(body: unknown, options?: { delaySeconds?: number }): Promise<unknown> };
  const mf = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response(null, { status: 404 }); } }',
    compatibilityDate: '2025-09-01',
    d1Databases: ['DB'],
  });
  try {
    await mf.ready;
    const sent: unknown[] = [];
    const producer: Producer = {
      send(body) {
        sent.push(structuredClone(body));
        return Promise.resolve();
      },
    };
    const env = { SECRET, ALERTS: producer, DB: await mf.getD1Database('DB') };
    const { handler, ran, runs } = handlerOf(variant);
    const worker = createQueueWorker<typeof env>({
      secret: (e) => e.SECRET,
      queue: (e) => e.ALERTS,
      dedupe: (e) => e.DB,
      setup: (receiver) => {
        receiver.on('churn_risk_alert', handler);
      },
    });
    const kept: Promise<unknown>[] = [];
    const ctx = {
      waitUntil: (promise: Promise<unknown>) => {
        kept.push(promise);
      },
    };
    await worker.queue({ queue: 'alerts', messages: [] }, env, ctx); // builds the isolate's receiver
    await settle();
    const { headers, body } = createTestDelivery(
      { userId: `user_walk_${variant}` },
      { secret: SECRET },
    );
    const request = new Request('https://worker.example/', { method: 'POST', headers, body });
    const acks: string[] = [];

    await window.start();
    const response = await worker.fetch(request, env, ctx);
    await response.arrayBuffer();
    await Promise.all(kept);
    const messages = sent.splice(0).map((message, index) => ({
      id: `m${String(index + 1)}`,
      body: message,
      attempts: 1,
      ack: () => void acks.push('ack'),
      retry: () => void acks.push('retry'),
    }));
    await worker.queue({ queue: 'alerts', messages }, env, ctx);
    await ran;
    await settle();
    const coverage = await window.stop();

    if (acks.join() !== 'ack') throw new Error(`the message was not acked once: ${acks.join()}`);
    return { coverage, status: response.status, handlerRuns: runs() };
  } finally {
    await mf.dispose();
  }
}

/** Runs scenario `mode` with `variant` inside `window`. */
export async function runScenario<C>(
  mode: string,
  variant: string,
  window: CoverageWindow<C>,
): Promise<ScenarioOutcome<C>> {
  const run = `walk_${variant}_${String(process.pid)}`;
  switch (mode) {
    case 'memory':
      return expressWalk(variant, window, () => Promise.resolve({}));
    case 'redis':
      return expressWalk(variant, window, async () => {
        const { createRedisQueue } = await import('@churn-risk/redis');
        const queue = createRedisQueue({ connection: requiredEnv('REDIS_URL'), prefix: run });
        await queue.counts(); // connected
        return { queue, ...watchDurable(queue.store) };
      });
    case 'postgres':
      return expressWalk(variant, window, async () => {
        const { createPostgresQueue } = await import('@churn-risk/postgres');
        const connection = requiredEnv('DATABASE_URL');
        const queue = createPostgresQueue({ connection, schema: run });
        await queue.counts(); // connected, tables migrated
        return { queue, ...watchDurable(queue.store) };
      });
    case 'cloudflare':
      return cloudflareWalk(variant, window);
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}
