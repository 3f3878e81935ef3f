import { createReceiver, type Receiver } from '@churn-risk/core';
import { createRedisQueue, type RedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { SECRET, deliveryOf, freshAlert } from './fixtures.js';

const PREFIX = 'outage';

/**
 * Redis stopped with SIGKILL while deliveries keep arriving, then restarted from its AOF: every
 * alert answered 202 before the stop is handled, the ones answered 503 are accepted again on
 * redelivery, and no identity is left recorded without its job.
 */
describe('Redis stopped during load, restarted with AOF', () => {
  let redis: RedisServer | undefined;
  const receivers: Receiver[] = [];
  const queues: RedisQueue[] = [];

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close({ timeoutMs: 5000 }).catch(() => undefined)));
    await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
    await redis?.stop();
    redis?.cleanup();
  });

  it('answers 503 while Redis is down and loses no alert answered 202', async () => {
    redis = await startRedisServer({ appendOnly: true });
    const queue = createRedisQueue({
      connection: redis.url,
      prefix: PREFIX,
      enqueueTimeoutMs: 500,
    });
    queues.push(queue);
    const web = createReceiver({ secret: SECRET, queue, consume: false });
    receivers.push(web);

    const answers = new Map<
      string,
      { alert: Record<string, unknown>; status: number; code?: string }
    >();
    let stopped = false;
    let afterStop = 0;
    const sender = async (): Promise<void> => {
      while (!stopped || afterStop < 40) {
        const { alert, id } = freshAlert('outage');
        const result = await web.handle(deliveryOf(alert));
        const body = JSON.parse(result.body) as { error?: { code: string } };
        answers.set(id, {
          alert,
          status: result.status,
          ...(body.error ? { code: body.error.code } : {}),
        });
        if (stopped) afterStop += 1;
      }
    };
    const senders = Array.from({ length: 8 }, sender);
    // Let some alerts through, then kill Redis under load.
    while (answers.size < 200) await new Promise((resolve) => setTimeout(resolve, 5));
    redis.signal('SIGKILL');
    stopped = true;
    await Promise.all(senders);

    const accepted = [...answers].filter(([, a]) => a.status === 202);
    const refused = [...answers].filter(([, a]) => a.status !== 202);
    expect(accepted.length).toBeGreaterThanOrEqual(200);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    for (const [, answer] of refused) {
      expect(answer).toMatchObject({ status: 503, code: 'OVERLOADED' });
    }

    // Restart on the same port from the same AOF; the web receiver reconnects by itself.
    const removeDir = redis.cleanup; // the folder holds the AOF: kept until the end
    const restarted = await startRedisServer({
      appendOnly: true,
      port: redis.port,
      dir: redis.dir,
    });
    redis = { ...restarted, cleanup: removeDir };

    // No identity recorded without its job.
    const probe = new Redis(restarted.url);
    try {
      const keys = await probe.keys(`${PREFIX}:alerts:de:*`);
      expect(keys.length).toBeGreaterThanOrEqual(accepted.length);
      for (const key of keys) {
        const jobId = await probe.get(key);
        expect(await probe.exists(`${PREFIX}:alerts:${String(jobId)}`), key).toBe(1);
      }
    } finally {
      probe.disconnect();
    }

    // A worker handles every alert answered 202 before the stop, exactly once.
    const handled = new Map<string, number>();
    const workerQueue = createRedisQueue({ connection: restarted.url, prefix: PREFIX });
    queues.push(workerQueue);
    const worker = createReceiver({ secret: SECRET, queue: workerQueue });
    receivers.push(worker);
    worker.on('churn_risk_alert', (_alert, context) => {
      handled.set(context.id, (handled.get(context.id) ?? 0) + 1);
    });
    await worker.drain({ timeoutMs: 30_000 });
    for (const [id] of accepted) expect(handled.get(id), id).toBe(1);

    // The alerts answered 503 are redelivered: each is accepted (202) and handled once. One whose
    // script ran just before the kill is already recorded: it answers duplicate, and its job runs.
    for (const [id, { alert }] of refused) {
      const result = await web.handle(deliveryOf(alert));
      expect(result.status, id).toBe(202);
    }
    await worker.drain({ timeoutMs: 30_000 });
    for (const [id] of refused) expect(handled.get(id), id).toBe(1);
    expect([...handled.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('Redis that does not answer (SIGSTOP)', () => {
  it('answers 503 after enqueueTimeoutMs; the late write makes the redelivery a duplicate that runs once', async () => {
    const redis = await startRedisServer();
    const queue = createRedisQueue({
      connection: redis.url,
      prefix: 'hang',
      enqueueTimeoutMs: 300,
    });
    const receiver = createReceiver({ secret: SECRET, queue });
    const runs = new Map<string, number>();
    receiver.on('churn_risk_alert', (_alert, context) => {
      runs.set(context.id, (runs.get(context.id) ?? 0) + 1);
    });
    try {
      const { alert, id } = freshAlert('hang');
      expect((await receiver.handle(deliveryOf(makeWarm()))).status).toBe(202); // connected
      redis.signal('SIGSTOP');
      const result = await receiver.handle(deliveryOf(alert));
      expect(result.status).toBe(503);
      expect(JSON.parse(result.body).error.code).toBe('OVERLOADED');
      redis.signal('SIGCONT');
      // The script sent before the stop runs once Redis resumes: the alert is stored after all.
      const again = await receiver.handle(deliveryOf(alert));
      expect(again.status).toBe(202);
      await receiver.drain({ timeoutMs: 20_000 });
      expect(runs.get(id)).toBe(1);
    } finally {
      redis.signal('SIGCONT');
      await receiver.close({ timeoutMs: 5000 }).catch(() => undefined);
      await redis.stop();
      redis.cleanup();
    }
  });
});

function makeWarm(): Record<string, unknown> {
  return freshAlert('warm').alert;
}
