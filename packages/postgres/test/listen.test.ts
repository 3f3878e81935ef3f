import { createReceiver } from '@churn-risk/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresQueue } from '../src/index.js';
import { deliveryOf, makeAlert, SECRET, sql, until, usePostgres } from './helpers.js';

// A consuming process is woken by NOTIFY through one LISTEN connection of its own, which
// reconnects when it drops; the poll is the fallback, and the only path with `listen: false`.

const postgres = usePostgres();

/** The pids of the backends that LISTEN on `schema`'s channel. */
async function listeners(schema: string): Promise<number[]> {
  const { rows } = await sql(
    postgres.url,
    `SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()`,
    [`LISTEN "churn_risk.${schema}"`],
  );
  return rows.map((row: { pid: number }) => row.pid);
}

/** A web process's receiver (accepts only) and a worker's, whose handled alerts are listed. */
function webAndWorker(
  schema: string,
  worker: { pollIntervalMs: number; listen?: boolean },
): { web: ReturnType<typeof createReceiver>; handled: string[] } {
  const web = createReceiver({
    secret: SECRET,
    queue: createPostgresQueue({ connection: postgres.url, schema }),
    consume: false,
  });
  const consumer = createReceiver({
    secret: SECRET,
    queue: createPostgresQueue({ connection: postgres.url, schema, ...worker }),
  });
  postgres.open.receivers.push(web, consumer);
  const handled: string[] = [];
  consumer.on('churn_risk_alert', (alert) => void handled.push(alert.userId));
  return { web, handled };
}

describe('LISTEN/NOTIFY (real Postgres)', () => {
  it('wakes an idle worker with no poll to speak of, also after its LISTEN connection was dropped', async () => {
    const schema = 'woken';
    // A poll of 10 minutes: only a notification can bring the alerts within the test.
    const { web, handled } = webAndWorker(schema, { pollIntervalMs: 600_000 });
    let pids: number[] = [];
    await until(async () => (pids = await listeners(schema)).length === 1, 'the LISTEN connection');
    const first = makeAlert();
    expect((await web.handle(deliveryOf(first))).status).toBe(202);
    await until(() => handled.length === 1, 'the first alert');

    await sql(postgres.url, 'SELECT pg_terminate_backend($1)', [pids[0]]);
    await until(async () => {
      const now = await listeners(schema);
      return now.length === 1 && now[0] !== pids[0];
    }, 'the listener to reconnect');
    const second = makeAlert();
    expect((await web.handle(deliveryOf(second))).status).toBe(202);
    await until(() => handled.length === 2, 'the second alert');
    expect(handled).toEqual([first.userId, second.userId]);
  });

  it('with listen: false, opens no LISTEN connection and the poll finds the alerts', async () => {
    const schema = 'polled';
    const { web, handled } = webAndWorker(schema, { pollIntervalMs: 100, listen: false });
    const alert = makeAlert();
    expect((await web.handle(deliveryOf(alert))).status).toBe(202);
    await until(() => handled.length === 1, 'the alert');
    expect(await listeners(schema)).toEqual([]);
  });

  it('a retry that falls due later wakes the worker at its due time', async () => {
    const schema = 'retried';
    const consumer = createReceiver({
      secret: SECRET,
      queue: createPostgresQueue({ connection: postgres.url, schema, pollIntervalMs: 600_000 }),
      retries: { retries: 1, backoffMs: () => 300 },
    });
    postgres.open.receivers.push(consumer);
    const attempts: number[] = [];
    consumer.on('churn_risk_alert', (_alert, context) => {
      attempts.push(context.attempt);
      if (context.attempt === 0) throw new Error('not yet');
    });
    expect((await consumer.handle(deliveryOf(makeAlert()))).status).toBe(202);
    await until(() => attempts.length === 2, 'the retry');
    expect(attempts).toEqual([0, 1]);
  });

  it('an idle worker asks the database once per pollIntervalMs at most', async () => {
    const schema = 'idle';
    const pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
    pool.on('error', () => undefined);
    let checkouts = 0;
    pool.on('acquire', () => {
      checkouts++;
    });
    const pollIntervalMs = 200;
    const queue = createPostgresQueue({
      connection: pool,
      schema,
      pollIntervalMs,
      reclaimIntervalMs: 600_000,
    });
    const consumer = createReceiver({ secret: SECRET, queue });
    consumer.on('churn_risk_alert', () => undefined);
    try {
      await until(async () => (await listeners(schema)).length === 1, 'the worker to start');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const before = checkouts;
      const started = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const asked = checkouts - before;
      const intervals = (Date.now() - started) / pollIntervalMs;
      expect(asked).toBeGreaterThan(0);
      expect(asked).toBeLessThanOrEqual(Math.ceil(intervals) + 1);
    } finally {
      await consumer.close({ timeoutMs: 10_000 });
      await pool.end();
    }
  });
});
