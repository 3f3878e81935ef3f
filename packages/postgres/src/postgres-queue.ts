import { createDurableQueue, type DurableQueue } from '@churn-risk/core';
import type { PgBoss } from 'pg-boss';
import { resolvePostgresOptions, type PostgresQueueOptions } from './options.js';
import { createPostgresStore, type PostgresAlertStore } from './postgres-store.js';

/** The queue `createPostgresQueue` returns: core's durable queue over the Postgres store. */
export interface PostgresQueue extends DurableQueue<PostgresAlertStore> {
  /** The pg-boss instance, for pg-boss's own tools (read-only use). */
  readonly boss: PgBoss;
}

/**
 * A durable, shared queue for `createReceiver({ queue })` (SPEC sections 15 and 17): an alert is
 * answered `202` only once Postgres has committed its identity and its pg-boss job, in one
 * transaction; every consuming process takes jobs under a lease fenced by its token and runs
 * core's try protocol (`createDurableQueue`); retries are jobs due later, and an alert whose
 * worker died is taken over once its lease expires.
 *
 * @example
 * const queue = createPostgresQueue({ connection: process.env.DATABASE_URL! });
 * const receiver = createReceiver({ secret, queue, consume: false }); // a web process
 */
export function createPostgresQueue(options: PostgresQueueOptions): PostgresQueue {
  const resolved = resolvePostgresOptions(options);
  const store = createPostgresStore(options);
  const queue = createDurableQueue(store, {
    leaseMs: resolved.lockDurationMs,
    reclaimIntervalMs: resolved.reclaimIntervalMs,
    maxStalls: resolved.maxStalls,
    dedupeTtlMs: resolved.dedupeTtlMs,
    enqueueTimeoutMs: resolved.enqueueTimeoutMs,
    pollIntervalMs: resolved.pollIntervalMs,
  });
  return Object.defineProperty(queue, 'boss', {
    value: store.boss,
    enumerable: true,
  }) as PostgresQueue;
}
