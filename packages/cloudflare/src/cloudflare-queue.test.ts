import {
  AlertStalledError,
  NonRetryableError,
  createReceiver,
  type Receiver,
} from '@churn-risk/core';
import {
  pushQueueContract,
  type ContractTestApi,
  type ReceiverPlatform,
} from '@churn-risk/core/testing';
import { describe, expect, it } from 'vitest';
import type { D1Database, D1Statement, QueueProducer } from './bindings.js';
import { createCloudflareQueue, delaySecondsOf, type CloudflareQueue } from './cloudflare-queue.js';
import { D1Isolates, d1Databases, deliveryInit } from './d1.test-util.js';
import { MemoryQueues } from './memory-queues.test-util.js';

// Queue mode's code run in Node against a real D1 (SQLite in workerd, through miniflare's
// bindings proxy) and Cloudflare Queues in memory (memory-queues.test-util.ts). The example's
// tests run the same code inside workerd, with miniflare's own Queues.

const SECRET = 'whsec_cf_queue';

const freshDb = d1Databases(24);

/**
 * `db`, refusing the first `times` writes to the failed store (a D1 outage during the verdict);
 * `refused` counts the writes it refused.
 */
function refusingFailedWrites(db: D1Database, times: number): D1Database & { refused: number } {
  const inners = new WeakMap<D1Statement, D1Statement>();
  const wrapped = {
    refused: 0,
    prepare(query: string): D1Statement {
      const refuse = query.startsWith('INSERT INTO churn_risk_failed');
      const statement = (inner: D1Statement): D1Statement => {
        const outer: D1Statement = {
          bind: (...values) => statement(inner.bind(...values)),
          first: () => inner.first(),
          all: () => inner.all(),
          run: () => {
            if (!refuse || wrapped.refused >= times) return inner.run();
            wrapped.refused += 1;
            return Promise.reject(new Error('D1_ERROR: D1 is overloaded'));
          },
        };
        inners.set(outer, inner);
        return outer;
      };
      return statement(db.prepare(query));
    },
    batch: (statements: D1Statement[]) => db.batch(statements.map((s) => inners.get(s) ?? s)),
  };
  return wrapped;
}

/**
 * `producer`, refusing the first `times` sends made with a delay (the consumer's: a retry, or an
 * alert sent again), as a Queue that refuses sends does.
 */
function refusingDelayedSends(
  producer: QueueProducer,
  times: number,
): QueueProducer & { refused: number } {
  const wrapped = {
    refused: 0,
    send: (body: unknown, options?: { delaySeconds?: number }) => {
      if (options?.delaySeconds === undefined || wrapped.refused >= times) {
        return producer.send(body, options);
      }
      wrapped.refused += 1;
      return Promise.reject(new Error('Queue send failed: unavailable'));
    },
  };
  return wrapped;
}

/** One shared platform (Queues, D1) and any number of isolates on it. */
class Platform extends D1Isolates implements ReceiverPlatform {
  constructor(db: D1Database) {
    super(db, { maxRetries: 3 });
  }

  queue(): CloudflareQueue['queue'] {
    return this.isolate().queue;
  }

  failed(): ReturnType<ReceiverPlatform['failed']> {
    return (this.isolates[0] as CloudflareQueue).failed.failed();
  }

  retry(id: string): Promise<void> {
    const isolate = this.isolates[1] ?? this.isolates[0];
    if (isolate === undefined) return Promise.reject(new Error('no isolate'));
    return isolate.failed.retry(id);
  }

  #retryAlls = 0;
  /** From each isolate in turn. */
  retryAll(): Promise<number> {
    const isolate = this.isolates[this.#retryAlls++ % this.isolates.length];
    if (isolate === undefined) return Promise.reject(new Error('no isolate'));
    return isolate.failed.retryAll();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

pushQueueContract(
  { describe, it },
  { name: 'cloudflare queue mode', create: async () => new Platform(await freshDb()) },
);

/** The platform with a failed store that lists the oldest first (as D1's did before). */
class OldestFirst extends Platform {
  override async failed(): ReturnType<ReceiverPlatform['failed']> {
    return (await super.failed()).reverse();
  }
}

/** The contract's cases against `OldestFirst`, by name, to run and expect a failure from. */
const oldestFirstCases = new Map<string, () => Promise<void>>();
const capture: ContractTestApi = {
  describe: (_name, fn) => {
    fn();
  },
  it: (name, fn) => void oldestFirstCases.set(name, fn),
};
pushQueueContract(capture, {
  name: 'oldest first',
  create: async () => new OldestFirst(await freshDb()),
});

it('pushQueueContract fails a failed store that lists the oldest first', async () => {
  const newestFirst = oldestFirstCases.get('failed store: lists the newest failure first');
  expect(newestFirst).toBeDefined();
  await expect(newestFirst?.()).rejects.toThrow(/the later failure first/);
});

const delivery = (
  userId: string,
): { method: string; headers: Record<string, string>; body: string } =>
  deliveryInit({ userId }, SECRET);

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

  it('fails an alert after one try when a handler throws a NonRetryableError: no retry message, onError once', async () => {
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

  it('refuses an unknown option, naming the closest known one', async () => {
    const db = await freshDb();
    const producer = new MemoryQueues().producer('alerts');
    expect(() =>
      createCloudflareQueue({ producer, failed: db, deadLetterQeue: 'dlq' } as never),
    ).toThrow(/"deadLetterQeue" \(did you mean deadLetterQueue\?\)/);
  });

  it('a D1 outage during the verdict is no stall: four refused writes, then the alert is handled', async () => {
    const platform = new Platform(await freshDb());
    const db = refusingFailedWrites(platform.db, 4);
    const isolate = createCloudflareQueue({
      producer: platform.producer,
      dedupe: db,
      failed: db,
      deadLetterQueue: 'alerts-dlq',
    });
    platform.isolates.push(isolate);
    const receiver = receiverOn(isolate);
    const attempts: number[] = [];
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      attempts.push(attempt);
      if (db.refused < 4) throw new Error('CRM down');
    });
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_cfq_d1_out'));
    await platform.settle();
    expect(db.refused).toBe(4);
    // Tries 0 and 1, then try 1 again after each write D1 refused: never failed as stalled.
    expect(attempts).toEqual([0, 1, 1, 1, 1, 1]);
    expect(errors).toEqual([]);
    expect(await isolate.failed.count()).toBe(0);
    expect(platform.queues.size('alerts') + platform.queues.size('alerts-dlq')).toBe(0);
  });

  it("a D1 outage during the verdict fails an alert only for its handler's own failure, with onError once", async () => {
    const platform = new Platform(await freshDb());
    const db = refusingFailedWrites(platform.db, 4);
    const isolate = createCloudflareQueue({
      producer: platform.producer,
      dedupe: db,
      failed: db,
      deadLetterQueue: 'alerts-dlq',
    });
    platform.isolates.push(isolate);
    const receiver = receiverOn(isolate);
    const attempts: number[] = [];
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      attempts.push(attempt);
      throw new Error('CRM down');
    });
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_cfq_d1_out_failed'));
    await platform.settle();
    expect(attempts).toEqual([0, 1, 1, 1, 1, 1]);
    // onError once, with the handler's own error; the row names the handlers' failure.
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('CRM down');
    const failed = await isolate.failed.failed();
    expect(failed.map((f) => [f.alert.userId, f.tries, f.error.split(':')[0]])).toEqual([
      ['user_cfq_d1_out_failed', 2, 'HandlersFailedError'],
    ]);
  });

  it("a Queue that refuses the retry's send for four deliveries is no stall: the alert is handled", async () => {
    const platform = new Platform(await freshDb());
    // Each delivery sends twice (the retry, then the alert again) before it leaves the message to
    // the platform: four deliveries are refused, the fourth's retry dead-letters the message.
    const producer = refusingDelayedSends(platform.producer, 8);
    platform.producer = producer;
    const isolate = platform.isolate();
    const receiver = createReceiver({
      secret: SECRET,
      queue: isolate.queue,
      retries: { retries: 3, backoffMs: () => 5 },
    });
    const attempts: number[] = [];
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      attempts.push(attempt);
      if (attempts.length <= 4) throw new Error('CRM down');
    });
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_cfq_queue_out'));
    await platform.settle();
    expect(producer.refused).toBe(8);
    // No retry could be sent, so each delivery ran try 0 again; the dead-letter queue's consumer
    // sent the message back (its redeliveries were the consumer's own), and try 0 then succeeded.
    expect(attempts).toEqual([0, 0, 0, 0, 0]);
    expect(errors).toEqual([]);
    expect(await isolate.failed.count()).toBe(0);
    expect(platform.queues.size('alerts') + platform.queues.size('alerts-dlq')).toBe(0);
  });

  it('carries the stalls counted so far when it sends an alert again', async () => {
    const platform = new Platform(await freshDb());
    const db = refusingFailedWrites(platform.db, 1);
    const isolate = createCloudflareQueue({
      producer: platform.producer,
      failed: db,
      maxStalls: 1,
    });
    const receiver = receiverOn(isolate);
    const errors: unknown[] = [];
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs += 1;
      throw new NonRetryableError('no such user');
    });
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_cfq_stalls_carried'));
    let deliveries = 0;
    // Delivery 1 dies (a stall); delivery 2 runs, and its verdict's write is refused, so the alert
    // is sent again with 1 stall; delivery 3 (the new message) dies: 2 stalls, past maxStalls.
    await platform.queues.drain(
      ['alerts'],
      [
        (batch) =>
          ++deliveries % 2 === 1 ? Promise.reject(new Error('died')) : isolate.consume(batch),
      ],
    );
    expect(runs).toBe(1);
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
