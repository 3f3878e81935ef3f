import type { Receiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { PostgresQueue } from '../src/index.js';
import { startPostgres, type PostgresServer } from '../src/testing.js';

/** The secret of every receiver in these tests. */
export const SECRET = 'whsec_postgres_tests_7c2e';

let sequence = 0;

/** A valid alert with a fresh identity. */
export function makeAlert(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    event: 'churn_risk_alert',
    userId: `user_${String(process.pid)}_${String(sequence)}`,
    score: 0.81,
    tier: 'high',
    signals: ['activity_drop'],
    recommendation: 'Call them.',
    triggeredAt: new Date(Date.UTC(2026, 10, 1) + sequence * 1000).toISOString(),
    ...overrides,
  };
}

/** A signed delivery of `alert`, as `receiver.handle` takes it. */
export function deliveryOf(alert: Record<string, unknown>): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery(alert, { secret: SECRET });
  return { method: 'POST', headers, body };
}

/** What a test file opened on its database: closed after each test. */
export interface OpenedOnPostgres {
  receivers: Receiver[];
  queues: PostgresQueue[];
}

/**
 * Starts this file's own PostgreSQL cluster (stopped by pid after the file, also when a test
 * failed), and closes the receivers and queues pushed to `open` after each test.
 */
export function usePostgres(): { readonly url: string; open: OpenedOnPostgres } {
  let postgres: PostgresServer | undefined;
  const open: OpenedOnPostgres = { receivers: [], queues: [] };
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(async () => {
    await postgres?.stop();
    postgres?.cleanup();
  });
  afterEach(async () => {
    await Promise.all(open.receivers.splice(0).map((r) => r.close({ timeoutMs: 10_000 })));
    await Promise.all(open.queues.splice(0).map((q) => q.close()));
  });
  return {
    get url(): string {
      if (postgres === undefined) throw new Error('the Postgres server has not started');
      return postgres.url;
    },
    open,
  };
}

/** Waits until `check` holds, at most 15 s. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 15_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
