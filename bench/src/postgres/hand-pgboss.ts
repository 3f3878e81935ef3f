/**
 * The hand-written reference of `pnpm bench postgres`: the job's minimum done in the route itself
 * (`lib/hand-queue-route.ts`), then, in one transaction on a checked-out `pg` client, an insert
 * of the alert identity into a table with a primary key (`ON CONFLICT DO NOTHING`: a duplicate
 * inserts nothing and rolls back) and pg-boss's `send` on that same client, `COMMIT`, and only
 * then the 202. The same database work as `createPostgresQueue`'s accept, written directly.
 */
import pg from 'pg';
import { handEnqueue, type HandEnqueue } from '../lib/hand-queue-route.js';
import { loadPgBoss, type SendOptions } from '../lib/pg-boss-api.js';

const QUEUE = 'alerts';
const DEDUPE_TTL_MS = 72 * 3_600_000;
/** What a production route would set: a few retries with backoff. */
const JOB_OPTIONS: SendOptions = { retryLimit: 3, retryDelay: 1, retryBackoff: true };

/**
 * pg-boss on a `pg.Pool` of `url` (pg's default size, 10, as the receiver's queue), the identity
 * table in `schema`, and the route's work on them. pg-boss runs with the receiver's settings
 * (its maintenance on, no cron scheduling), so that both sides do the same background work.
 */
export async function handPgBoss(url: string, schema: string): Promise<HandEnqueue> {
  const { PgBoss } = await loadPgBoss();
  const pool = new pg.Pool({ connectionString: url });
  pool.on('error', () => undefined);
  const boss = new PgBoss({
    db: { executeSql: (text, values) => pool.query(text, values) },
    schema,
    supervise: true,
    schedule: false,
    migrate: true,
    createSchema: true,
    maintenanceIntervalSeconds: 3600,
  });
  boss.on('error', () => undefined);
  await boss.start();
  if ((await boss.getQueue(QUEUE)) === null) await boss.createQueue(QUEUE);
  const identity = `${schema}.alert_identity`;
  await pool.query(`
    CREATE TABLE IF NOT EXISTS ${identity} (alert_id text PRIMARY KEY, expires_at timestamptz NOT NULL);
    CREATE INDEX IF NOT EXISTS alert_identity_expires_at ON ${identity} (expires_at);`);
  const claim = `INSERT INTO ${identity} (alert_id, expires_at)
    VALUES ($1, now() + $2::bigint * interval '1 millisecond')
    ON CONFLICT (alert_id) DO NOTHING RETURNING alert_id`;

  return handEnqueue(async (alert, id) => {
    const client = await pool.connect();
    let failed: Error | undefined;
    try {
      await client.query('BEGIN');
      const claimed = await client.query(claim, [id, DEDUPE_TTL_MS]);
      if (claimed.rowCount === 0) {
        await client.query('ROLLBACK');
        return 'duplicate';
      }
      await boss.send(
        QUEUE,
        { id, alert, receivedAt: Date.now() },
        { ...JOB_OPTIONS, db: { executeSql: (text, values) => client.query(text, values) } },
      );
      await client.query('COMMIT');
      return 'accepted';
    } catch (error) {
      failed = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(failed);
    }
  });
}
