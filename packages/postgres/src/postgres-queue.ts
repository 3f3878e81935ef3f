import { createDurableQueue, type DurableQueue } from '@churn-risk/core/store';
import { resolvePostgresOptions, type PostgresQueueOptions } from './options.js';
import { createPostgresStore, type PostgresAlertStore } from './postgres-store.js';

/** The queue `createPostgresQueue` returns: core's durable queue over the Postgres store. */
export type PostgresQueue = DurableQueue<PostgresAlertStore>;

/**
 * A durable, shared queue for `createReceiver({ queue })`: an alert is
 * answered `202` only once Postgres has committed its identity and the alert, in one statement;
 * every consuming process takes alerts under a lease fenced by its token (woken by `LISTEN` /
 * `NOTIFY`) and runs core's try protocol (`createDurableQueue`); retries are rows due later, and
 * an alert whose worker died is taken over at most `leaseMs + reclaimIntervalMs` after the death.
 *
 * @example
 * const queue = createPostgresQueue({ connection: process.env.DATABASE_URL! });
 * const receiver = createReceiver({ secret, queue, consume: false }); // a web process
 */
export function createPostgresQueue(options: PostgresQueueOptions): PostgresQueue {
  const resolved = resolvePostgresOptions(options);
  const store = createPostgresStore(options);
  return createDurableQueue(store, {
    leaseMs: resolved.leaseMs,
    reclaimIntervalMs: resolved.reclaimIntervalMs,
    maxStalls: resolved.maxStalls,
    dedupeTtlMs: resolved.dedupeTtlMs,
    enqueueTimeoutMs: resolved.enqueueTimeoutMs,
    pollIntervalMs: resolved.pollIntervalMs,
  });
}
