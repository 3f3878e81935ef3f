import type { Receiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { describe, expect, it, vi } from 'vitest';
import type { D1Database, QueueProducer } from './bindings.js';
import { createFailedStore, createQueueWorker, type WorkerExecutionContext } from './index.js';
import { d1Databases } from './d1.test-util.js';
import { MemoryQueues } from './memory-queues.test-util.js';

// createQueueWorker in Node: two isolates (two workers from the same options, as the platform
// builds one per isolate) on a real D1 (SQLite in workerd, through miniflare's bindings proxy) and
// Cloudflare Queues in memory. The same worker runs inside workerd in queue-mode.workerd.test.ts.

const SECRET = 'whsec_cf_queue_worker';

interface Env {
  CHURN_RISK_WEBHOOK_SECRET?: string;
  CHURN_RISK_ALERTS: QueueProducer;
  CHURN_RISK_DB: D1Database;
}

const freshDb = d1Databases(3);

function delivery(userId: string, secret = SECRET): Request {
  const { headers, body } = createTestDelivery({ userId }, { secret });
  return new Request('https://worker.example/', { method: 'POST', headers, body });
}

const ctx: WorkerExecutionContext = { waitUntil: () => undefined };

describe('createQueueWorker', () => {
  it('sends each accepted alert to the Queue before the 202; the consumer runs it, retries it as a new message, and a redelivery to another isolate is a duplicate', async () => {
    const queues = new MemoryQueues({ alerts: { maxRetries: 3, deadLetterQueue: 'alerts-dlq' } });
    const env: Env = {
      CHURN_RISK_WEBHOOK_SECRET: SECRET,
      CHURN_RISK_ALERTS: queues.producer('alerts'),
      CHURN_RISK_DB: await freshDb(),
    };
    const runs: number[] = [];
    const options = {
      secret: (e: Env) => e.CHURN_RISK_WEBHOOK_SECRET,
      queue: (e: Env) => e.CHURN_RISK_ALERTS,
      dedupe: (e: Env) => e.CHURN_RISK_DB,
      deadLetterQueue: 'alerts-dlq',
      retries: { retries: 3, backoffMs: () => 10 },
      setup: (receiver: Receiver) => {
        receiver.on('churn_risk_alert', (_alert, { attempt }) => {
          runs.push(attempt);
          if (attempt < 2) throw new Error('CRM down');
        });
      },
    };
    const isolates = [createQueueWorker<Env>(options), createQueueWorker<Env>(options)];
    const [first, second] = isolates as [(typeof isolates)[0], (typeof isolates)[0]];

    const request = delivery('user_cfqw_1');
    const again = request.clone();
    const accepted = await first.fetch(request, env, ctx);
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ received: true });
    expect(queues.size('alerts')).toBe(1); // in the Queue before the answer
    expect(runs).toEqual([]); // and not run by fetch

    const duplicate = await second.fetch(again, env, ctx);
    expect(duplicate.status).toBe(202);
    expect(await duplicate.json()).toEqual({ received: true, duplicate: true });
    expect(queues.size('alerts')).toBe(1);

    await queues.drain(
      ['alerts', 'alerts-dlq'],
      isolates.map((worker) => (batch) => worker.queue(batch, env, ctx)),
    );
    expect(runs).toEqual([0, 1, 2]); // failed twice, then succeeded, once in all
    expect(await createFailedStore(env.CHURN_RISK_DB, env.CHURN_RISK_ALERTS).count()).toBe(0);
  });

  it('answers 500 and throws from the consumer while the secret is not set, and builds at the next call', async () => {
    const queues = new MemoryQueues();
    const env: Env = {
      CHURN_RISK_ALERTS: queues.producer('alerts'),
      CHURN_RISK_DB: await freshDb(),
    };
    const logger = { debug() {}, info() {}, warn() {}, error: vi.fn() };
    const worker = createQueueWorker<Env>({
      secret: (e) => e.CHURN_RISK_WEBHOOK_SECRET,
      queue: (e) => e.CHURN_RISK_ALERTS,
      failed: (e) => e.CHURN_RISK_DB,
      logger,
      setup: (receiver) => receiver.on('churn_risk_alert', () => undefined),
    });
    const refused = await worker.fetch(delivery('user_cfqw_2'), env, ctx);
    expect(refused.status).toBe(500);
    const body = await refused.text();
    expect(body).toContain('CHURN_RISK_WEBHOOK_SECRET');
    expect(body).not.toContain(SECRET);
    await expect(worker.queue({ queue: 'alerts', messages: [] }, env, ctx)).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
    });
    expect(logger.error).toHaveBeenCalled();
    const set = { ...env, CHURN_RISK_WEBHOOK_SECRET: SECRET };
    expect((await worker.fetch(delivery('user_cfqw_2'), set, ctx)).status).toBe(202);
    expect(queues.size('alerts')).toBe(1);
  });

  it('refuses bad options at creation, with the fix', () => {
    const setup = (): void => undefined;
    const queue = (): QueueProducer => ({ send: () => Promise.resolve() });
    const db = (): D1Database => ({}) as D1Database;
    const refusal = (options: Record<string, unknown>): Error => {
      try {
        createQueueWorker({ secret: SECRET, setup, ...options } as never);
      } catch (error) {
        return error as Error;
      }
      throw new Error('not refused');
    };
    expect(refusal({ dedupe: db })).toBeInstanceOf(TypeError);
    expect(refusal({ dedupe: db }).message).toMatch(
      /^createQueueWorker needs queue: .*createWorker/,
    );
    expect(refusal({ queue }).message).toMatch(/^Queue mode keeps failed alerts in a D1 table/);
    expect(refusal({ queue, dedupe: { ttlMs: 1 } }).message).toMatch(/needs dedupe: \(env\)/);
    expect(refusal({ queue, failed: 'DB' }).message).toMatch(/needs failed: \(env\)/);
    expect(refusal({ queue, dedupe: db, concurrency: 2 }).message).toMatch(
      /^createQueueWorker does not know the option "concurrency" \(each alert runs/,
    );
    expect(refusal({ queue, dedupe: db, dedupeTtl: 1 }).message).toContain(
      '(did you mean dedupeTtlMs?)',
    );
    expect(() => createQueueWorker({ secret: SECRET, queue, dedupe: db } as never)).toThrow(
      /^createQueueWorker needs setup/,
    );
    expect(() => createQueueWorker({ setup, queue, dedupe: db } as never)).toThrow(
      /^createQueueWorker needs secret/,
    );
    // Building nothing: the bindings are read from the first request's env.
    expect(createQueueWorker({ secret: SECRET, setup, queue, dedupe: db })).toHaveProperty('queue');
  });
});
