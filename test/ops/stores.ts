import { createCloudflareQueue, type D1Database } from '@churn-risk/cloudflare';
import { createPostgresQueue } from '@churn-risk/postgres';
import { createRedisQueue } from '@churn-risk/redis';
import type { Miniflare } from 'miniflare';
import type { AlertQueue } from '@churn-risk/core/store';
import type { OpsQueue } from '@churn-risk/ops';
import type { OpsBackend } from '../../packages/ops/test/api-suite.js';
import { failingReceiver, until } from '../../packages/ops/test/fixture.js';
import { MemoryQueues } from '../../packages/cloudflare/src/memory-queues.test-util.js';

// The back ends of the operations page's tests, each with a receiver that fails alerts on it:
// Redis and Postgres (servers this file's suite started), D1 (miniflare) with Queues in memory.

/** `value`, once the server that gives it has started (a suite's `beforeAll`). */
export const started = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('the server has not started');
  return value;
};

let namespace = 0;
const fresh = (): string => `ops_${String(process.pid)}_${String(++namespace)}`;

/** A receiver consuming `queue`, failing its alerts; closing ends both. */
function consuming(queue: AlertQueue & OpsQueue): OpsBackend {
  const fixture = failingReceiver(queue);
  return {
    queue,
    fixture,
    settle: (done) => until(done),
    close: async () => {
      await fixture.receiver.close({ timeoutMs: 10_000 });
      await queue.close();
    },
  };
}

/** A receiver on a fresh Redis queue (its own prefix), consuming. */
export function redisBackend(url: string): OpsBackend {
  return consuming(createRedisQueue({ connection: url, prefix: fresh(), leaseMs: 2_000 }));
}

/** A receiver on a fresh Postgres queue (its own schema), consuming. */
export function postgresBackend(url: string): OpsBackend {
  return consuming(createPostgresQueue({ connection: url, schema: fresh(), leaseMs: 2_000 }));
}

/**
 * A receiver on Cloudflare queue mode over `db` (a D1 database of its own), with the Queue in
 * memory: `settle` delivers its messages to the consumer until `done()`. The page gets the D1
 * failed store, as a Worker passes it.
 */
export function d1Backend(db: D1Database): OpsBackend {
  const queues = new MemoryQueues({ alerts: { maxRetries: 3 } });
  const cloudflare = createCloudflareQueue({
    producer: queues.producer('alerts'),
    dedupe: db,
    failed: db,
  });
  const fixture = failingReceiver(cloudflare.queue);
  return {
    queue: cloudflare.failed,
    fixture,
    settle: (done) =>
      until(async () => {
        await queues.drain(['alerts'], [(batch) => cloudflare.consume(batch)]);
        return done();
      }),
    close: () => fixture.receiver.close({ timeoutMs: 10_000 }),
  };
}

/** The D1 databases a test file's miniflare offers, one per use. */
export function d1Databases(
  mf: () => Miniflare,
  names: readonly string[],
): () => Promise<D1Database> {
  let next = 0;
  return async () => {
    const name = names[next++];
    if (name === undefined) throw new Error('no D1 database left');
    return await mf().getD1Database(name);
  };
}
