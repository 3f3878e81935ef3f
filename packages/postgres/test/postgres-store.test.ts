import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresAlertStore } from '../src/index.js';
import { QUEUE, statements } from '../src/sql.js';
import { until, usePostgres } from './helpers.js';

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

async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

describe('the Postgres store', () => {
  it('creates its schema on first use from several processes at once', async () => {
    const stores: PostgresAlertStore[] = Array.from({ length: 5 }, () =>
      createPostgresStore({ connection: postgres.url, schema: 'first_use' }),
    );
    try {
      const answers = await Promise.all(
        stores.map((store) => store.accept(entry(), { dedupeTtlMs: 60_000 })),
      );
      expect(answers).toEqual(Array(5).fill('accepted'));
      expect((await stores[0]?.counts())?.waiting).toBe(5);
      const tables = await sql(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'first_use'
         AND table_name IN ('job', 'alert_identity', 'queue') ORDER BY table_name`,
      );
      expect(tables.rows.map((row: { table_name: string }) => row.table_name)).toEqual([
        'alert_identity',
        'job',
        'queue',
      ]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('accepts a burst larger than its pool on a cold start: a send never waits for a second connection', async () => {
    // Two processes starting at once on a fresh schema, each with a pool of 2: the one that did not
    // create pg-boss's queue must not look it up during a send, from inside an accept transaction
    // (every connection would be held by a transaction waiting for one more: 503s until time-out).
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

  it('keeps a failed alert keepFailedMs, then pg-boss maintenance deletes it; expired identities are swept', async () => {
    const store = createPostgresStore({
      connection: postgres.url,
      schema: 'housekeeping',
      keepFailedMs: 1000,
    });
    try {
      const alert = entry();
      await store.accept(alert, { dedupeTtlMs: 100 });
      const taken = await store.take({ token: 't', leaseMs: 60_000 });
      expect(taken).toBeDefined();
      expect(await store.fail(taken?.id ?? '', 't', { error: new Error('x'), succeeded: [] })).toBe(
        true,
      );
      const row = await sql(
        `SELECT deletion_seconds, state FROM housekeeping.job WHERE id = $1::uuid`,
        [taken?.id],
      );
      expect(row.rows[0]).toEqual({ deletion_seconds: 1, state: 'failed' });
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await until(async () => {
        await store.boss.supervise();
        return (await store.counts()).failed === 0;
      }, 'pg-boss maintenance to delete the failed alert');
      await store.reclaimExpired({ maxStalls: 3 }); // a consuming process sweeps identities
      const identities = await sql('SELECT count(*)::int AS n FROM housekeeping.alert_identity');
      expect(identities.rows[0]).toEqual({ n: 0 });
    } finally {
      await store.close();
    }
  });

  it('never touches a pg.Pool it was given, and works on it', async () => {
    const pool = new pg.Pool({ connectionString: postgres.url, max: 3 });
    pool.on('error', () => undefined); // a user's pool: its owner listens (the server stops later)
    const store = createPostgresStore({ connection: pool, schema: 'own_pool' });
    expect(await store.accept(entry(), { dedupeTtlMs: 60_000 })).toBe('accepted');
    await store.close();
    expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    await pool.end();
  });

  it('takes the oldest due alert through an index, not by sorting every waiting alert', async () => {
    const store = createPostgresStore({ connection: postgres.url, schema: 'backlog' });
    try {
      const oldest = entry();
      await store.accept(oldest, { dedupeTtlMs: 60_000 });
      for (let i = 0; i < 3000; i += 10) {
        await Promise.all(
          Array.from({ length: 10 }, () => store.accept(entry(), { dedupeTtlMs: 60_000 })),
        );
      }
      await sql('ANALYZE backlog.job');
      // The take's own statement, its lease parameters aside: EXPLAIN, not a timing.
      const take = statements('backlog').take;
      const select = /WITH next AS \(([\s\S]*?)\)\s*UPDATE/.exec(take)?.[1] ?? '';
      expect(select).toContain('FOR UPDATE SKIP LOCKED');
      const { rows } = await sql(`EXPLAIN ${select}`, [QUEUE]);
      const plan = rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan/);
      expect(plan).not.toMatch(/Seq Scan/);
      const first = await store.take({ token: 't', leaseMs: 60_000 });
      expect(first?.entry.id).toBe(oldest.id);
    } finally {
      await store.close();
    }
  }, 120_000);
});
