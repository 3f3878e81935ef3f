import { createReceiver, type Receiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTs, type NodeProcess } from '../support/node-process.js';
import { SECRET, deliveryOf, eventually, readLog, tempLog } from './fixtures.js';

const ORDER_WORKER = fileURLToPath(
  new URL('../support/redis/order-worker-process.ts', import.meta.url),
);

// Order per user across processes, with a worker process SIGKILLed while it holds two users: until
// their alerts are taken over (at most leaseMs + reclaimIntervalMs later) no other alert of those
// users runs anywhere; the alert taken over still goes first, then the users' other alerts,
// oldest first, one at a time, also one accepted after the kill with an older time.
describe('order per user: a worker process killed while it holds users', () => {
  let redis: RedisServer;
  const children: NodeProcess[] = [];
  const webs: Receiver[] = [];
  const log = tempLog('order-takeover');

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const child of children) child.kill();
    await Promise.all(webs.map((web) => web.close({ timeoutMs: 5000 }).catch(() => undefined)));
    await redis.stop();
    redis.cleanup();
    log.remove();
  });

  function spawnWorker(env: Record<string, string>): NodeProcess {
    const child = spawnTs(ORDER_WORKER, {
      REDIS_URL: redis.url,
      SECRET,
      LOG_FILE: log.file,
      LEASE_MS: '1500',
      RECLAIM_MS: '500',
      ...env,
    });
    children.push(child);
    return child;
  }

  /** An alert of `user` triggered `minute` minutes after 2026-04-01 08:00 UTC, and its identity. */
  function alertOf(user: string, minute: number): { alert: Record<string, unknown>; id: string } {
    const triggeredAt = new Date(Date.UTC(2026, 3, 1, 8, minute)).toISOString();
    const alert = {
      event: 'churn_risk_alert',
      userId: user,
      score: 0.9,
      tier: 'high',
      signals: ['payment_failed'],
      recommendation: 'Call them.',
      triggeredAt,
    };
    return { alert, id: `${user}:${triggeredAt}` };
  }

  it('after the takeover, each user runs the alert taken over first, then the others oldest first, one at a time', async () => {
    const prefix = `order-kill-${process.pid}`;
    const web = createReceiver({
      secret: SECRET,
      queue: createRedisQueue({ connection: redis.url, prefix }),
      consume: false,
      order: 'per-user',
    });
    webs.push(web);
    const [u, v] = [`u_${process.pid}`, `v_${process.pid}`];
    const accepted = async (user: string, minute: number): Promise<string> => {
      const { alert, id } = alertOf(user, minute);
      expect((await web.handle(deliveryOf(alert))).status).toBe(202);
      return id;
    };
    const u2 = await accepted(u, 20);
    const u3 = await accepted(u, 30);
    const u1 = await accepted(u, 10); // accepted last, the oldest: it goes first
    const v1 = await accepted(v, 10);
    const v2 = await accepted(v, 20);

    // The first worker takes the first alert of each user, and never finishes them.
    const first = spawnWorker({ PREFIX: prefix, WORK_MS: '60000', CONCURRENCY: '4' });
    await eventually(
      () => readLog(log.file).filter(([kind]) => kind === 'start').length === 2,
      20_000,
      'the first worker to start one alert of each user',
    );
    first.kill('SIGKILL');
    await first.exited;
    // Accepted after the kill, older than every other alert of u: it still waits for the takeover.
    const u0 = await accepted(u, 5);

    const second = spawnWorker({ PREFIX: prefix, WORK_MS: '20', CONCURRENCY: '4' });
    const done = (id: string): boolean =>
      readLog(log.file).some(([kind, alertId]) => kind === 'done' && alertId === id);
    await eventually(
      () => [u0, u1, u2, u3, v1, v2].every(done),
      30_000,
      'the second worker to run every alert',
    );
    second.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const lines = readLog(log.file);
    const [firstPid, secondPid] = [String(first.pid), String(second.pid)];
    // The first worker started the oldest alert of each user (u1, not u2 or u3 that came first).
    expect(
      lines.filter(([, , pid]) => pid === firstPid).map(([kind, id]) => `${kind} ${id}`),
    ).toEqual(expect.arrayContaining([`start ${u1}`, `start ${v1}`]));
    expect(lines.filter(([, , pid]) => pid === firstPid)).toHaveLength(2);
    // Per user, on the second worker: one alert at a time (each start followed by its done), the
    // alert taken over first, then the rest oldest first.
    const runsOf = (ids: string[]): string[] =>
      lines
        .filter(([, id, pid]) => pid === secondPid && ids.includes(id))
        .map(([kind, id]) => `${kind} ${id}`);
    expect(runsOf([u0, u1, u2, u3])).toEqual(
      [u1, u0, u2, u3].flatMap((id) => [`start ${id}`, `done ${id}`]),
    );
    expect(runsOf([v1, v2])).toEqual([v1, v2].flatMap((id) => [`start ${id}`, `done ${id}`]));
  });
});
