import type { Receiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
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
export function usePostgres(): {
  readonly url: string;
  readonly server: PostgresServer;
  open: OpenedOnPostgres;
} {
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
    get server(): PostgresServer {
      if (postgres === undefined) throw new Error('the Postgres server has not started');
      return postgres;
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

/** Runs one statement on `url` over a connection of its own. */
export async function sql(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/**
 * Makes `user` log in with a password (`scram-sha-256` on 127.0.0.1, the way managed Postgres
 * gives it) instead of the test cluster's trust: a line in front of pg_hba.conf, then a reload.
 */
export async function requirePassword(server: PostgresServer, user: string): Promise<void> {
  const file = join(server.dir, 'data', 'pg_hba.conf');
  const line = `host all ${user} 127.0.0.1/32 scram-sha-256\n`;
  writeFileSync(file, line + readFileSync(file, 'utf8'));
  await sql(server.url, 'SELECT pg_reload_conf()');
}

/** `server.url` for another user (with a password) and database. */
export function urlAs(server: PostgresServer, user: string, password: string, db: string): string {
  const url = new URL(server.url);
  url.username = user;
  url.password = password;
  url.pathname = `/${db}`;
  return url.toString();
}
