import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresAlertStore } from '../src/index.js';
import { statements } from '../src/sql.js';
import { sql as sqlOn, until, usePostgres } from './helpers.js';

const postgres = usePostgres();
let sequence = 0;

function entry(): { id: string; alert: never; receivedAt: number } {
  sequence += 1;
  const triggeredAt = new Date(Date.UTC(2026, 0, 1) + sequence * 1000).toISOString();
  const userId = `store_${String(sequence)}`;
  const alert = {
    event: 'churn_risk_alert',
    userId,
    score: 0.9,
    tier: 'high',
    signals: [],
    recommendation: '',
    triggeredAt,
  };
  return { id: `${userId}:${triggeredAt}`, alert: alert as never, receivedAt: Date.now() };
}

const sql = (text: string, values: unknown[] = []): Promise<pg.QueryResult> =>
  sqlOn(postgres.url, text, values);

describe('the Postgres store', () => {
  it('eight stores starting at once on a fresh schema create it once, under the advisory lock', async () => {
    const stores: PostgresAlertStore[] = Array.from({ length: 8 }, () =>
      createPostgresStore({ connection: postgres.url, schema: 'first_use' }),
    );
    try {
      const answers = await Promise.all(
        stores.map((store) => store.accept(entry(), { dedupeTtlMs: 60_000 })),
      );
      expect(answers).toEqual(Array(8).fill('accepted'));
      expect((await stores[0]?.counts())?.waiting).toBe(8);
      const tables = await sql(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'first_use'
         ORDER BY table_name`,
      );
      expect(tables.rows.map((row: { table_name: string }) => row.table_name)).toEqual([
        'alert_identities',
        'alert_users',
        'alerts',
        'migrations',
      ]);
      const versions = await sql('SELECT version FROM first_use.migrations ORDER BY version');
      expect(versions.rows).toEqual([1, 2, 3, 4, 5].map((version) => ({ version })));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('accepts a burst larger than its pool on a cold start', async () => {
    // Two processes starting at once on a fresh schema, each with a pool of 2.
    const connection = { connectionString: postgres.url, max: 2 };
    const stores = [0, 1].map(() =>
      createPostgresStore({ connection, schema: 'cold_burst', enqueueTimeoutMs: 5_000 }),
    );
    try {
      const answers = await Promise.allSettled(
        stores.flatMap((store) =>
          Array.from({ length: 8 }, () => store.accept(entry(), { dedupeTtlMs: 60_000 })),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(16).fill('fulfilled'));
      expect((await stores[0]?.counts())?.waiting).toBe(16);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('an identity is a duplicate until its time is up, then accepted again', async () => {
    const store = createPostgresStore({ connection: postgres.url, schema: 'ttl' });
    try {
      const alert = entry();
      expect(await store.accept(alert, { dedupeTtlMs: 400 })).toBe('accepted');
      expect(await store.accept(alert, { dedupeTtlMs: 400 })).toBe('duplicate');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await store.accept(alert, { dedupeTtlMs: 400 })).toBe('accepted');
      expect((await store.counts()).waiting).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('a completed alert keeps only its identity (still a duplicate); housekeeping deletes expired identities and old failed alerts', async () => {
    const store = createPostgresStore({
      connection: postgres.url,
      schema: 'housekeeping',
      keepFailedMs: 1000,
      pollIntervalMs: 100,
    });
    try {
      const done = entry();
      await store.accept(done, { dedupeTtlMs: 60_000 });
      const first = await store.take({ token: 't1', leaseMs: 60_000 });
      expect(await store.complete(first?.jobId ?? '', 't1')).toBe(true);
      expect((await sql('SELECT count(*)::int AS n FROM housekeeping.alerts')).rows[0]).toEqual({
        n: 0,
      });
      expect(await store.accept(done, { dedupeTtlMs: 60_000 })).toBe('duplicate');
      expect((await store.counts()).completed).toBe(1);

      await store.accept(entry(), { dedupeTtlMs: 100 });
      const taken = await store.take({ token: 't2', leaseMs: 60_000 });
      const error = new Error('x');
      expect(
        await store.fail(taken?.jobId ?? '', 't2', {
          outcome: 'failed',
          error,
          tries: 1,
          succeeded: [],
        }),
      ).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect((await store.counts()).failed).toBe(1);
      await store.reclaimExpired(); // a consuming process sweeps, once a minute at most
      await until(async () => (await store.counts()).failed === 0, 'the old failed alert to go');
      await until(async () => {
        const { rows } = await sql('SELECT count(*)::int AS n FROM housekeeping.alert_identities');
        return (rows[0] as { n: number }).n === 1; // the completed alert's, not yet expired
      }, 'the expired identity to go');
    } finally {
      await store.close();
    }
  });

  it('never touches a pg.Pool it was given, and works on it', async () => {
    const pool = new pg.Pool({ connectionString: postgres.url, max: 3 });
    pool.on('error', () => undefined); // a user's pool: its owner listens (the server stops later)
    const store = createPostgresStore({ connection: pool, schema: 'own_pool' });
    expect(await store.accept(entry(), { dedupeTtlMs: 60_000 })).toBe('accepted');
    expect(await store.take({ token: 't', leaseMs: 60_000 })).toBeDefined();
    await store.close();
    expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    await pool.end();
  });

  it('sends named statements, and runs them unnamed once the server connection lost them', async () => {
    // One connection, as behind a transaction-pooling PgBouncer that does not track prepared
    // statements: `DEALLOCATE ALL` takes away what `pg` believes the connection has prepared, so
    // the next named statement is refused (26000) before it runs.
    const pool = new pg.Pool({ connectionString: postgres.url, max: 1 });
    pool.on('error', () => undefined);
    const store = createPostgresStore({ connection: pool, schema: 'named' });
    try {
      expect(await store.accept(entry(), { dedupeTtlMs: 60_000 })).toBe('accepted');
      const prepared = await pool.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements WHERE name LIKE 'churn_risk_%'",
      );
      expect(prepared.rows.length).toBeGreaterThan(0);
      await pool.query('DEALLOCATE ALL');
      expect(await store.accept(entry(), { dedupeTtlMs: 60_000 })).toBe('accepted');
      const taken = await store.take({ token: 't', leaseMs: 60_000 });
      expect(taken).toBeDefined();
      expect(await store.complete(taken?.jobId ?? '', 't')).toBe(true);
      expect((await store.counts()).waiting).toBe(1);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('finds a fenced row by its primary key, however many leases are held', async () => {
    const store = createPostgresStore({ connection: postgres.url, schema: 'fence' });
    try {
      for (let i = 0; i < 2000; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, () => store.accept(entry(), { dedupeTtlMs: 60_000 })),
        );
      }
      // Statistics from before the drain (autovacuum's ANALYZE lags behind it): no lease held.
      await sql('ANALYZE fence.alerts');
      const taken = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.take({ token: `t${String(i)}`, leaseMs: 60_000 }),
        ),
      );
      expect(taken.every((alert) => alert !== undefined)).toBe(true);
      // The completion's own statement as the store runs it, prepared, with the generic plan
      // PostgreSQL settles on after five runs: EXPLAIN, not a timing.
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      let plan: string;
      try {
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(`PREPARE complete_alert AS ${statements('fence').complete}`);
        const { rows } = await client.query<Record<string, string>>(
          `EXPLAIN EXECUTE complete_alert(${String(Number(taken[0]?.jobId))}, 't0')`,
        );
        plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await client.end();
      }
      expect(plan).toMatch(/Index Scan using alerts_pkey/);
      expect(plan).not.toMatch(/alerts_lease|Seq Scan/);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('takes the oldest due alert through an index, not by sorting every waiting alert', async () => {
    const store = createPostgresStore({ connection: postgres.url, schema: 'backlog' });
    try {
      const oldest = entry();
      await store.accept(oldest, { dedupeTtlMs: 60_000 });
      for (let i = 0; i < 3000; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, () => store.accept(entry(), { dedupeTtlMs: 60_000 })),
        );
      }
      await sql('ANALYZE backlog.alerts');
      // The take's own statement, its lease aside: EXPLAIN, not a timing.
      const take = statements('backlog').take;
      const select = /next AS \(([\s\S]*?)\), taken AS/.exec(take)?.[1] ?? '';
      expect(select).toContain('FOR UPDATE SKIP LOCKED');
      const { rows } = await sql(`EXPLAIN ${select}`);
      const plan = rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan using alerts_due/);
      expect(plan).not.toMatch(/Seq Scan|Sort/);
      const first = await store.take({ token: 't', leaseMs: 60_000 });
      expect(first?.id).toBe(oldest.id);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('completes before it takes: a completion waiting for its own row holds no other alert', async () => {
    // Another statement holds the row being completed (a take's scan can lock a row it does not
    // take, until its end). Taking first, the completion held the alert it took while it waited:
    // two completions in that state waited for each other until PostgreSQL cancelled one.
    const schema = 'complete_first';
    const store = createPostgresStore({ connection: postgres.url, schema });
    const holder = new pg.Client({ connectionString: postgres.url });
    await holder.connect();
    try {
      for (let i = 0; i < 3; i++) await store.accept(entry(), { dedupeTtlMs: 60_000 });
      const taken = await store.take({ token: 'first', leaseMs: 60_000, wait: false });
      if (taken === undefined) throw new Error('nothing taken');
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${schema}.alerts WHERE id = $1 FOR UPDATE`, [taken.jobId]);
      const completion = store.completeAndTake(taken.jobId, 'first', {
        token: 'second',
        leaseMs: 60_000,
      });
      await until(async () => {
        const { rows } = await sql(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE '%DELETE FROM ${schema}.alerts%'`,
        );
        return (rows[0] as { n: number }).n === 1;
      }, 'the completion to wait for its row');
      // Every other alert is free while it waits: it locked none of them.
      const free = await sql(
        `SELECT id FROM ${schema}.alerts WHERE state = 'waiting' FOR UPDATE SKIP LOCKED`,
      );
      expect(free.rowCount).toBe(2);
      await holder.query('COMMIT');
      const { completed, next } = await completion;
      expect(completed).toBe(true);
      expect(next?.jobId).toBe(String(Number(taken.jobId) + 1));
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await store.close();
    }
  });

  /**
   * A store on `schema` whose table of alerts holds 3,000 waiting alerts while its statistics count
   * it empty: a burst drained, then a vacuum landing while the burst's last alerts are still in
   * flight (another transaction still sees them). It removes the rest, but cannot truncate the
   * table past them, so the table keeps its pages, counted at 0 rows, and the next burst fills
   * them. Autovacuum is off for the table, so that nothing corrects the statistics meanwhile.
   */
  async function staleStatistics(schema: string): Promise<PostgresAlertStore> {
    const store = createPostgresStore({ connection: postgres.url, schema });
    const fill = async (): Promise<void> => {
      for (let i = 0; i < 3000; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, () => store.accept(entry(), { dedupeTtlMs: 60_000 })),
        );
      }
    };
    await fill();
    await sql(`ALTER TABLE ${schema}.alerts SET (autovacuum_enabled = false)`);
    await sql(`DELETE FROM ${schema}.alerts WHERE id < (SELECT max(id) - 5 FROM ${schema}.alerts)`);
    const holder = new pg.Client({ connectionString: postgres.url });
    await holder.connect();
    try {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query(`SELECT count(*) FROM ${schema}.alerts`);
      await sql(`DELETE FROM ${schema}.alerts`);
      await sql(`VACUUM ${schema}.alerts`);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    const { rows } = await sql(
      `SELECT relpages, reltuples FROM pg_class WHERE oid = '${schema}.alerts'::regclass`,
    );
    expect(rows[0]).toMatchObject({ reltuples: 0 });
    expect((rows[0] as { relpages: number }).relpages).toBeGreaterThan(50);
    await fill();
    return store;
  }

  /**
   * Runs `statement` twice (EXPLAIN ANALYZE, each in a transaction rolled back) on a connection
   * whose prepared statements use the generic plan PostgreSQL settles on after five runs, after
   * `prepare`: the rows of its top node and the pages the second run read (not a timing).
   */
  async function pagesRead(
    prepare: string[],
    statement: string,
  ): Promise<{ rows: number; pages: number }> {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      for (const text of prepare) await client.query(text);
      const explain = async (): Promise<Record<string, number | undefined>> => {
        await client.query('BEGIN');
        const { rows } = await client.query<{
          'QUERY PLAN': [{ Plan: Record<string, number | undefined> }];
        }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`);
        await client.query('ROLLBACK');
        return rows[0]?.['QUERY PLAN'][0].Plan ?? {};
      };
      await explain(); // the connection's first run reads the catalog (and compiles a function)
      const plan = await explain();
      return {
        rows: plan['Actual Rows'] ?? 0,
        pages: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
      };
    } finally {
      await client.end();
    }
  }

  it('leases a taken alert through its id when the statistics count the table empty', async () => {
    const schema = 'stale_take';
    const store = await staleStatistics(schema);
    try {
      // Each statement that takes, as the store runs it (the function as it is). About 20 pages
      // each through the keys; a join of every row to the taken one read more than 3,000.
      const text = statements(schema);
      const take = await pagesRead(
        [`PREPARE take_one(text, bigint) AS ${text.take}`],
        `EXECUTE take_one('t', 60000)`,
      );
      const completeAndTake = await pagesRead(
        [`PREPARE complete_take(bigint, text, text, bigint) AS ${text.completeAndTake}`],
        `EXECUTE complete_take(0, 'x', 't', 60000)`,
      );
      const inOrder = await pagesRead(
        [],
        `SELECT * FROM ${schema}.complete_and_take_in_order(0, 'x', 't', 60000, false)`,
      );
      for (const read of [take, completeAndTake, inOrder]) {
        expect(read.rows).toBe(1);
        expect(read.pages).toBeLessThan(300);
      }
    } finally {
      await store.close();
    }
  }, 120_000);

  it('sweeps a batch of old failed alerts, and no more, when the statistics count the table empty', async () => {
    const schema = 'stale_sweep';
    const store = await staleStatistics(schema);
    try {
      await sql(
        `UPDATE ${schema}.alerts SET state = 'failed', failed_at = now() - interval '1 day'
         WHERE id IN (SELECT id FROM ${schema}.alerts ORDER BY id LIMIT 2000)`,
      );
      const sweep = await pagesRead(
        [`PREPARE sweep_failed(bigint, int) AS ${statements(schema).sweepFailed}`],
        'EXECUTE sweep_failed(60000, 500)',
      );
      // The batch's rows through the keys (a few pages each); the subquery run again for every
      // row read millions of pages and deleted all 2,000.
      expect(sweep.pages).toBeLessThan(5000);
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(
          `PREPARE sweep_failed(bigint, int) AS ${statements(schema).sweepFailed}`,
        );
        const { rowCount } = await client.query('EXECUTE sweep_failed(60000, 500)');
        expect(rowCount).toBe(500);
      } finally {
        await client.end();
      }
      const { rows } = await sql(
        `SELECT count(*)::int AS n FROM ${schema}.alerts WHERE state = 'failed'`,
      );
      expect(rows[0]).toEqual({ n: 1500 });
    } finally {
      await store.close();
    }
  }, 120_000);
});
