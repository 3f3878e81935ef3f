import { Redis } from 'ioredis';
import pg from 'pg';
import type { QueueKind } from './settings';

/** How a handler run ended; `running` until it does (or forever, if its process died). */
export type RunOutcome = 'running' | 'done' | 'failed' | 'lease-lost';

/** One entry of the run log: a handler run, or an `onError` call (`kind: 'on-error'`). */
export interface RunEntry {
  id: number;
  alertId: string;
  kind: 'handler' | 'on-error';
  /** The server that ran it (`CHURN_RISK_EXAMPLE_INSTANCE`). */
  instance: string;
  /** `context.attempt`: 0 for the first try. */
  attempt: number;
  /** `context.stalls`: how often a process died (or froze) mid-try before this run. */
  stalls: number;
  /** Milliseconds since the epoch. */
  startedAt: number;
  endedAt: number | null;
  outcome: RunOutcome | 'reported';
}

/** What a new entry needs. */
export type NewRunEntry = Pick<RunEntry, 'alertId' | 'kind' | 'instance' | 'attempt' | 'stalls'>;

/**
 * The example's record of what its handlers did, in the queue's own database (a table on
 * Postgres, keys on Redis): the side effect whose count the tests check. A real app writes its
 * own rows here (a CRM task, an email sent) the same way.
 */
export interface RunLog {
  /** Records a run that starts now; resolves with its id. */
  start(entry: NewRunEntry): Promise<number>;
  /** Records how run `id` ended. */
  finish(id: number, outcome: Exclude<RunOutcome, 'running'>): Promise<void>;
  /** Records an `onError` call. */
  reported(entry: Omit<NewRunEntry, 'kind'>): Promise<void>;
  /** The entries of one alert, oldest first; without `alertId`, the latest `limit` of all. */
  list(alertId?: string, limit?: number): Promise<RunEntry[]>;
  close(): Promise<void>;
}

/** A run log in the database the queue uses. */
export function createRunLog(kind: QueueKind, url: string): RunLog {
  return kind === 'postgres' ? postgresRunLog(url) : redisRunLog(url);
}

interface RunRow {
  id: string;
  alert_id: string;
  kind: RunEntry['kind'];
  instance: string;
  attempt: number;
  stalls: number;
  started_at: string;
  ended_at: string | null;
  outcome: RunEntry['outcome'];
}

function postgresRunLog(url: string): RunLog {
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  pool.on('error', () => undefined); // a dropped idle client: the next query reconnects
  let ready: Promise<void> | undefined;
  const table = (): Promise<void> =>
    (ready ??= (async () => {
      const client = await pool.connect();
      try {
        // Two servers may start at once: the advisory lock makes CREATE TABLE IF NOT EXISTS safe.
        await client.query('BEGIN');
        await client.query("SELECT pg_advisory_xact_lock(hashtext('example_runs'))");
        await client.query(`CREATE TABLE IF NOT EXISTS example_runs (
          id bigserial PRIMARY KEY,
          alert_id text NOT NULL,
          kind text NOT NULL,
          instance text NOT NULL,
          attempt integer NOT NULL,
          stalls integer NOT NULL,
          started_at bigint NOT NULL,
          ended_at bigint,
          outcome text NOT NULL)`);
        await client.query(
          'CREATE INDEX IF NOT EXISTS example_runs_alert ON example_runs (alert_id)',
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        ready = undefined;
        throw error;
      } finally {
        client.release();
      }
    })());
  const insert = async (entry: NewRunEntry, outcome: RunEntry['outcome']): Promise<number> => {
    await table();
    const now = Date.now();
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO example_runs (alert_id, kind, instance, attempt, stalls, started_at, ended_at, outcome)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [
        entry.alertId,
        entry.kind,
        entry.instance,
        entry.attempt,
        entry.stalls,
        now,
        outcome === 'running' ? null : now,
        outcome,
      ],
    );
    return Number(rows[0]?.id);
  };
  return {
    start: (entry) => insert(entry, 'running'),
    async finish(id, outcome) {
      await pool.query('UPDATE example_runs SET ended_at = $2, outcome = $3 WHERE id = $1', [
        id,
        Date.now(),
        outcome,
      ]);
    },
    async reported(entry) {
      await insert({ ...entry, kind: 'on-error' }, 'reported');
    },
    async list(alertId, limit = 50) {
      await table();
      const { rows } =
        alertId === undefined
          ? await pool.query<RunRow>('SELECT * FROM example_runs ORDER BY id DESC LIMIT $1', [
              limit,
            ])
          : await pool.query<RunRow>('SELECT * FROM example_runs WHERE alert_id = $1 ORDER BY id', [
              alertId,
            ]);
      return rows.map((row) => ({
        id: Number(row.id),
        alertId: row.alert_id,
        kind: row.kind,
        instance: row.instance,
        attempt: row.attempt,
        stalls: row.stalls,
        startedAt: Number(row.started_at),
        endedAt: row.ended_at === null ? null : Number(row.ended_at),
        outcome: row.outcome,
      }));
    },
    close: () => pool.end(),
  };
}

const PREFIX = 'churn-risk-example';

function redisRunLog(url: string): RunLog {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 3 });
  redis.on('error', () => undefined); // ioredis reconnects; a failing command rejects
  const runKey = (id: number): string => `${PREFIX}:run:${String(id)}`;
  const alertKey = (alertId: string): string => `${PREFIX}:alert:${alertId}`;
  const read = async (ids: number[]): Promise<RunEntry[]> => {
    if (ids.length === 0) return [];
    const values = await redis.mget(ids.map(runKey));
    return values.flatMap((value) => (value === null ? [] : [JSON.parse(value) as RunEntry]));
  };
  const insert = async (entry: NewRunEntry, outcome: RunEntry['outcome']): Promise<number> => {
    const id = await redis.incr(`${PREFIX}:seq`);
    const now = Date.now();
    const run: RunEntry = {
      id,
      ...entry,
      startedAt: now,
      endedAt: outcome === 'running' ? null : now,
      outcome,
    };
    await redis
      .multi()
      .set(runKey(id), JSON.stringify(run))
      .rpush(alertKey(entry.alertId), id)
      .exec();
    return id;
  };
  return {
    start: (entry) => insert(entry, 'running'),
    async finish(id, outcome) {
      const [run] = await read([id]);
      if (run === undefined) return;
      await redis.set(runKey(id), JSON.stringify({ ...run, endedAt: Date.now(), outcome }));
    },
    async reported(entry) {
      await insert({ ...entry, kind: 'on-error' }, 'reported');
    },
    async list(alertId, limit = 50) {
      if (alertId !== undefined) {
        return read((await redis.lrange(alertKey(alertId), 0, -1)).map(Number));
      }
      const last = Number((await redis.get(`${PREFIX}:seq`)) ?? 0);
      const ids = Array.from({ length: Math.min(limit, last) }, (_, i) => last - i);
      return read(ids);
    },
    async close() {
      await redis.quit();
    },
  };
}
