import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsHandler } from '../../packages/ops/src/index.js';
import { authorize, bodyOf, postRetry } from '../../packages/ops/test/client.js';
import { makeAlert, until } from '../../packages/ops/test/fixture.js';
import type { OpsBackend } from '../../packages/ops/test/api-suite.js';
import { postgresBackend, redisBackend, started } from './stores.js';

// Many retry-alls at once through the operations page, over a real redis-server and a real
// PostgreSQL cluster: thousands of failed alerts, 50 `POST api/retry {"all":true}` at once while
// the receiver consumes them and each fails again at once. Every call answers 200, their counts
// add up to the number of failed alerts, and each alert runs once after the retries (its failed
// handler once more, the handler that had succeeded not again): a retry-all puts back the
// failures of its snapshot, not an alert that another call put back and that failed again since.

let redis: RedisServer | undefined;
let postgres: PostgresServer | undefined;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedisServer(), startPostgres()]);
});

afterAll(async () => {
  const results = await Promise.allSettled([redis?.stop(), postgres?.stop()]);
  redis?.cleanup();
  postgres?.cleanup();
  for (const result of results) if (result.status === 'rejected') throw result.reason;
});

/** `count` alerts delivered and failed on `backend` (each after its one try). */
async function failedAlerts(backend: OpsBackend, count: number): Promise<string[]> {
  const users: string[] = [];
  for (let start = 0; start < count; start += 100) {
    const alerts = Array.from({ length: Math.min(100, count - start) }, () => makeAlert());
    await Promise.all(alerts.map((alert) => backend.fixture.deliver(alert)));
    users.push(...alerts.map((alert) => alert.userId ?? ''));
  }
  await backend.settle(async () => (await backend.queue.counts?.())?.failed === count);
  return users;
}

const CALLS = 50;

function raceSuite(name: string, count: number, create: () => OpsBackend): void {
  it(`${name}: ${String(CALLS)} retry-alls at once over ${String(count)} failed alerts all answer 200; each alert runs once`, async () => {
    const backend = create();
    try {
      const users = await failedAlerts(backend, count);
      const { fixture, queue } = backend;
      const ops = createOpsHandler({ queue, authorize, timeoutMs: 10_000 });
      const responses = await Promise.all(
        Array.from({ length: CALLS }, () => postRetry(ops, { all: true })),
      );
      const bodies = await Promise.all(
        responses.map((r) => bodyOf<{ retried?: number; error?: { code: string } }>(r)),
      );
      const statuses = responses.map((r) => r.status);
      const retried = bodies.map((b) => b.retried ?? 0);
      console.log(
        `${name}: statuses ${JSON.stringify(countBy(statuses))}, retried counts ${JSON.stringify(
          countBy(retried.filter((n) => n > 0)),
        )}, sum ${String(retried.reduce((s, n) => s + n, 0))}`,
      );
      expect(statuses).toEqual(Array.from({ length: CALLS }, () => 200));
      expect(retried.reduce((sum, n) => sum + n, 0)).toBe(count);
      // Every alert runs once after the retries, and fails again: crm twice in all (the first
      // failure, then the retry), audit once (it had succeeded, so the retry skips it).
      await until(async () => (await queue.counts?.())?.failed === count, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 200)); // a run more, if any
      const crm = countBy(fixture.runs.crm);
      expect(users.filter((user) => crm[user] !== 2)).toEqual([]);
      expect(fixture.runs.crm).toHaveLength(2 * count);
      expect(fixture.runs.audit).toHaveLength(count);
      expect(await queue.counts?.()).toMatchObject({ failed: count, waiting: 0, active: 0 });
    } finally {
      await backend.close();
    }
  }, 180_000);
}

function countBy(values: readonly (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[String(value)] = (counts[String(value)] ?? 0) + 1;
  return counts;
}

describe('retry-alls that race, through the operations page', () => {
  raceSuite('Redis', 2_000, () => redisBackend(started(redis).url));
  raceSuite('Postgres', 2_000, () => postgresBackend(started(postgres).url));
});
