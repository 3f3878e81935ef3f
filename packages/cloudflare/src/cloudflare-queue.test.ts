import {
  AlertStalledError,
  NonRetryableError,
  createReceiver,
  type Receiver,
} from '@churn-risk/core';
import {
  createTestDelivery,
  pushQueueContract,
  type ReceiverPlatform,
} from '@churn-risk/core/testing';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { D1Database } from './bindings.js';
import { createCloudflareQueue, delaySecondsOf, type CloudflareQueue } from './cloudflare-queue.js';
import { MemoryQueues } from './memory-queues.test-util.js';

// Queue mode's code run in Node against a real D1 (SQLite in workerd, through miniflare's
// bindings proxy) and Cloudflare Queues in memory (memory-queues.test-util.ts). The example's
// tests run the same code inside workerd, with miniflare's own Queues.

const SECRET = 'whsec_cf_queue';
const DATABASES = Array.from({ length: 12 }, (_, i) => `DB${String(i)}`);
let mf: Miniflare;
let nextDb = 0;

beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response(null, { status: 404 }); } }',
    compatibilityDate: '2025-09-01',
    d1Databases: DATABASES,
  });
  await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
});

/** A D1 database of its own for each use (tables are not shared between cases). */
async function freshDb(): Promise<D1Database> {
  const name = DATABASES[nextDb++];
  if (name === undefined) throw new Error('no D1 database left: add one to DATABASES');
  return await mf.getD1Database(name);
}

/** One shared platform (Queues, D1) and any number of isolates on it. */
class Platform implements ReceiverPlatform {
  readonly queues = new MemoryQueues({
    alerts: { maxRetries: 3, deadLetterQueue: 'alerts-dlq' },
  });
  readonly isolates: CloudflareQueue[] = [];
  readonly db: D1Database;

  constructor(db: D1Database) {
    this.db = db;
  }

  queue(): CloudflareQueue['queue'] {
    return this.isolate().queue;
  }

  isolate(): CloudflareQueue {
    const isolate = createCloudflareQueue({
      producer: this.queues.producer('alerts'),
      dedupe: this.db,
      failed: this.db,
      deadLetterQueue: 'alerts-dlq',
    });
    this.isolates.push(isolate);
    return isolate;
  }

  settle(): Promise<void> {
    return this.queues.drain(
      ['alerts', 'alerts-dlq'],
      this.isolates.map((isolate) => (batch) => isolate.consume(batch)),
    );
  }

  failed(): ReturnType<ReceiverPlatform['failed']> {
    return (this.isolates[0] as CloudflareQueue).failed.failed();
  }

  retry(id: string): Promise<void> {
    const isolate = this.isolates[1] ?? this.isolates[0];
    if (isolate === undefined) return Promise.reject(new Error('no isolate'));
    return isolate.failed.retry(id);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

pushQueueContract(
  { describe, it },
  { name: 'cloudflare queue mode', create: async () => new Platform(await freshDb()) },
);

function delivery(userId: string): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
  return { method: 'POST', headers, body };
}

function receiverOn(isolate: CloudflareQueue): Receiver {
  return createReceiver({
    secret: SECRET,
    queue: isolate.queue,
    retries: { retries: 1, backoffMs: () => 5 },
  });
}

describe('createCloudflareQueue', () => {
  it('answers 503 OVERLOADED when the send fails, and claims nothing', async () => {
    const platform = new Platform(await freshDb());
    const receiver = receiverOn(platform.isolate());
    const other = receiverOn(platform.isolate());
    receiver.on('churn_risk_alert', () => undefined);
    platform.queues.failSends = true;
    const request = delivery('user_cfq_503');
    const refused = await receiver.handle(request);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'OVERLOADED' } });
    expect(platform.queues.size('alerts')).toBe(0);
    platform.queues.failSends = false;
    // The identity was released: the redelivery, in another isolate, is accepted, not a duplicate.
    expect((await other.handle(request)).body).toBe('{"received":true}');
    expect(platform.queues.size('alerts')).toBe(1);
  });

  it('retries as a new message, delayed in whole seconds, carrying the record', async () => {
    expect([0, 1, 999, 1000, 1001, 10 ** 9].map(delaySecondsOf)).toEqual([0, 1, 1, 1, 2, 43_200]);
    const platform = new Platform(await freshDb());
    const receiver = receiverOn(platform.isolate());
    const sent: unknown[] = [];
    const producer = platform.queues.producer('alerts');
    // Watch what the consumer sends: a second isolate whose producer records the bodies.
    const watching = createCloudflareQueue({
      producer: {
        send: (body, options) => {
          sent.push({ body, options });
          return producer.send(body, options);
        },
      },
      failed: platform.db,
    });
    const consumer = receiverOn(watching);
    for (const r of [receiver, consumer]) {
      r.on('churn_risk_alert', () => undefined, { id: 'audit' });
      r.on(
        'churn_risk_alert',
        (_a, { attempt }) => {
          if (attempt === 0) throw new Error('CRM down');
        },
        { id: 'crm' },
      );
    }
    await receiver.handle(delivery('user_cfq_retry'));
    await platform.queues.drain(['alerts'], [(batch) => watching.consume(batch)]);
    expect(sent).toEqual([
      {
        body: expect.objectContaining({ churnRisk: 1, tries: 1, succeeded: ['audit'] }) as unknown,
        options: { delaySeconds: 1 },
      },
    ]);
  });

  it('fails an alert the platform dead-lettered, with onError once, and acks what is not an alert', async () => {
    const platform = new Platform(await freshDb());
    const isolate = platform.isolate();
    const receiver = receiverOn(isolate);
    let runs = 0;
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', () => void (runs += 1));
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_cfq_dlq'));
    // The consumer dies on every delivery (it throws before any verdict): the platform gives up
    // after max_retries and moves the message to the dead-letter queue, consumed by the worker.
    const dying = (): Promise<void> => Promise.reject(new Error('isolate died'));
    await platform.queues.drain(['alerts'], [dying]);
    expect(platform.queues.size('alerts-dlq')).toBe(1);
    await platform.queues.producer('alerts-dlq').send({ not: 'an alert' });
    await platform.settle();
    expect(runs).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AlertStalledError);
    const failed = await isolate.failed.failed();
    expect(failed.map((f) => [f.alert.userId, f.error.startsWith('AlertStalledError')])).toEqual([
      ['user_cfq_dlq', true],
    ]);
    expect(await isolate.failed.count()).toBe(1);
    expect(platform.queues.size('alerts-dlq')).toBe(0);
  });

  it('fails an alert after one try when a handler throws a NonRetryableError (SPEC 18): no retry message, onError once', async () => {
    const platform = new Platform(await freshDb());
    const isolate = platform.isolate();
    const receiver = createReceiver({
      secret: SECRET,
      queue: isolate.queue,
      retries: { retries: 3, backoffMs: () => 5 },
    });
    const attempts: number[] = [];
    const errors: unknown[] = [];
    receiver.on(
      'churn_risk_alert',
      (_alert, { attempt }) => {
        attempts.push(attempt);
        throw new NonRetryableError('no such user in the CRM');
      },
      { id: 'crm' },
    );
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_cfq_nonretry'));
    await platform.settle();
    expect(attempts).toEqual([0]);
    expect(errors).toHaveLength(1);
    expect(platform.queues.size('alerts')).toBe(0);
    const failed = await isolate.failed.failed();
    expect(failed.map((f) => [f.alert.userId, f.tries])).toEqual([['user_cfq_nonretry', 1]]);
  });

  it('counts a redelivery without a verdict as a stall, and fails it past maxStalls', async () => {
    const platform = new Platform(await freshDb());
    const isolate = createCloudflareQueue({
      producer: platform.queues.producer('alerts'),
      failed: platform.db,
      maxStalls: 0,
    });
    const receiver = receiverOn(isolate);
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', () => undefined);
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_cfq_stall'));
    let deliveries = 0;
    await platform.queues.drain(
      ['alerts'],
      [
        (batch) =>
          ++deliveries === 1 ? Promise.reject(new Error('died')) : isolate.consume(batch),
      ],
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AlertStalledError);
    expect(await isolate.failed.count()).toBe(1);
  });

  it('retryAll sends back each failed alert once, record kept, tries reset', async () => {
    const platform = new Platform(await freshDb());
    const isolate = platform.isolate();
    const receiver = receiverOn(isolate);
    const attempts: number[] = [];
    let okRuns = 0;
    receiver.on('churn_risk_alert', () => void (okRuns += 1), { id: 'ok' });
    receiver.on(
      'churn_risk_alert',
      (_a, { attempt }) => {
        attempts.push(attempt);
        throw new Error('always');
      },
      { id: 'broken' },
    );
    for (const user of ['user_cfq_all_1', 'user_cfq_all_2']) await receiver.handle(delivery(user));
    await platform.settle();
    expect(await isolate.failed.count()).toBe(2);
    expect(await isolate.failed.retryAll()).toBe(2);
    expect(await isolate.failed.count()).toBe(0);
    await platform.settle();
    expect(await isolate.failed.count()).toBe(2);
    expect(okRuns).toBe(2);
    expect(attempts).toEqual([0, 0, 1, 1, 0, 0, 1, 1]);
    const health = await receiver.health();
    expect(health.queue).toEqual({ kind: 'cloudflare-queues', reachable: true });
  });
});
