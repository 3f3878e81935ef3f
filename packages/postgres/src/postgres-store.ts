import {
  resolveFailedListOptions,
  type AlertStore,
  type FailedAlert,
  type FailedListOptions,
  type QueueCounts,
  type QueueHealth,
  type QueuedAlert,
  type StoredAlert,
} from '@churn-risk/core';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { PgBoss } from 'pg-boss';
import { describeConnection, openPool } from './connection.js';
import { resolvePostgresOptions, type PostgresQueueOptions } from './options.js';
import { QUEUE, statements } from './sql.js';

/** What the store keeps in a pg-boss job's `data`. */
export interface AlertJobData {
  /** The alert identity `userId:triggeredAt` (what `retry(id)` also takes). */
  alertId: string;
  /**
   * The alert as it was accepted (`QueuedAlert`), as JSON text: jsonb would reorder its keys, and a
   * handler gets the alert exactly as it was delivered.
   */
  entry: string;
  /** Tries made so far. */
  tries: number;
  /** Ids of the handlers that succeeded in earlier tries. */
  succeeded: string[];
  /** How often a taker of this alert died. */
  stalls: number;
  /** The last try's error message. */
  error?: string;
  /** The lease of the taker that holds the alert: its token, and its end in ms (database clock). */
  lease?: { token: string; until: number };
}

/** The Postgres `AlertStore`, with the pg-boss instance it runs on (for pg-boss's own tools). */
export interface PostgresAlertStore extends AlertStore {
  readonly kind: 'postgres';
  /** The pg-boss instance (started on first use), for read-only use of pg-boss's tools. */
  readonly boss: PgBoss;
  /** The pg-boss queue that holds the alerts: `churn-risk-alerts`. */
  readonly queueName: string;
  /** The schema of pg-boss's tables and the alert identities. */
  readonly schema: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A long retry limit: pg-boss's own expiry (a backstop after 24 h active) only ever retries. */
const RETRY_LIMIT = 1_000_000;
/** pg-boss's longest expiry: an alert active this long without a reclaim is put back by pg-boss. */
const EXPIRE_SECONDS = 24 * 3600;
/** How often a consuming process deletes expired identities, at most. */
const SWEEP_INTERVAL_MS = 60_000;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

class PgAlertStore implements PostgresAlertStore {
  readonly kind = 'postgres';
  readonly queueName = QUEUE;
  readonly schema: string;
  readonly boss: PgBoss;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #sql: ReturnType<typeof statements>;
  readonly #dedupeTtlMs: number;
  readonly #keepFailedMs: number;
  readonly #where: string;
  #ready: Promise<void> | undefined;
  #closed = false;
  #lastSweep = 0;

  constructor(options: PostgresQueueOptions) {
    const resolved = resolvePostgresOptions(options);
    this.schema = resolved.schema;
    this.#dedupeTtlMs = resolved.dedupeTtlMs;
    this.#keepFailedMs = resolved.keepFailedMs;
    this.#where = describeConnection(resolved.connection);
    const { pool, owned } = openPool(resolved.connection, resolved.enqueueTimeoutMs);
    this.#pool = pool;
    this.#ownsPool = owned;
    this.#sql = statements(resolved.schema);
    this.boss = new PgBoss({
      db: { executeSql: (text, values) => pool.query(text, values) },
      schema: resolved.schema,
      supervise: true, // pg-boss's maintenance deletes completed and failed jobs past their time
      schedule: false,
      migrate: true,
      createSchema: true,
      maintenanceIntervalSeconds: 3600,
    });
    // pg-boss reports its maintenance's errors here (a database that is down): the store's own
    // calls report that to core, which logs it once.
    this.boss.on('error', () => undefined);
    this.boss.on('warning', () => undefined);
  }

  /** Creates the schema and tables (pg-boss's migration, then the identity table) on first use. */
  #start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('The Postgres store is closed.'));
    this.#ready ??= (async () => {
      await this.boss.start();
      await this.#pool.query(`BEGIN; ${this.#sql.createIdentityTable} COMMIT;`);
      if ((await this.boss.getQueue(QUEUE)) === null) {
        await this.boss.createQueue(QUEUE, {
          retryLimit: RETRY_LIMIT,
          expireInSeconds: EXPIRE_SECONDS,
          retentionSeconds: 50 * 365 * 24 * 3600, // waiting alerts are never deleted (int seconds)
          deleteAfterSeconds: seconds(this.#dedupeTtlMs),
        });
      }
      // pg-boss caches its queues at start; a process that started while another created the
      // queue has not cached it, and its first sends would look it up on the pool from inside the
      // accept transactions, each holding a connection: a burst as large as the pool then waits
      // for a connection none will free (503 until the time-out). A lookup by id caches it now.
      await this.boss.findJobs(QUEUE, { id: randomUUID() });
    })().catch((error: unknown) => {
      this.#ready = undefined; // the next call tries again
      throw error;
    });
    return this.#ready;
  }

  async #query(text: string, values: unknown[]): Promise<pg.QueryResult> {
    await this.#start();
    return this.#pool.query(text, values);
  }

  async accept(
    entry: QueuedAlert,
    options: { dedupeTtlMs: number },
  ): Promise<'accepted' | 'duplicate'> {
    await this.#start();
    const client = await this.#pool.connect();
    let release: Error | undefined;
    // A checked-out client has no listener of the pool's: without one of its own, a connection
    // lost mid-transaction (the server stopped or crashed) is an unhandled 'error' event that
    // ends the process. The query in flight rejects with the same error, answered 503 below.
    const lost = (error: Error): void => {
      release = error;
    };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const jobId = randomUUID();
      const claimed = await client.query(this.#sql.claimIdentity, [
        entry.id,
        jobId,
        options.dedupeTtlMs,
      ]);
      if (claimed.rowCount === 0) {
        await client.query('ROLLBACK');
        return 'duplicate';
      }
      const data: AlertJobData = {
        alertId: entry.id,
        entry: JSON.stringify(entry),
        tries: 0,
        succeeded: [],
        stalls: 0,
      };
      await this.boss.send(QUEUE, data, {
        id: jobId,
        retryLimit: RETRY_LIMIT,
        expireInSeconds: EXPIRE_SECONDS,
        db: { executeSql: (text, values) => client.query(text, values) },
      });
      await client.query('COMMIT');
      return 'accepted';
    } catch (error) {
      release = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.removeListener('error', lost);
      client.release(release);
    }
  }

  async take(options: { token: string; leaseMs: number }): Promise<StoredAlert | undefined> {
    const { rows } = await this.#query(this.#sql.take, [QUEUE, options.token, options.leaseMs]);
    const row = rows[0] as { id: string; data: AlertJobData } | undefined;
    if (row === undefined) return undefined;
    const { tries, succeeded, stalls } = row.data;
    return {
      id: row.id,
      entry: JSON.parse(row.data.entry) as QueuedAlert,
      tries,
      succeeded,
      stalls,
    };
  }

  async #fenced(text: string, id: string, token: string, rest: unknown[]): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const result = await this.#query(text, [QUEUE, id, token, ...rest]);
    return result.rowCount === 1;
  }

  extend(id: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#fenced(this.#sql.extend, id, token, [leaseMs]);
  }

  complete(id: string, token: string): Promise<boolean> {
    return this.#fenced(this.#sql.complete, id, token, [seconds(this.#dedupeTtlMs)]);
  }

  scheduleRetry(
    id: string,
    token: string,
    verdict: { delayMs: number; succeeded: readonly string[]; error: Error },
  ): Promise<boolean> {
    return this.#fenced(this.#sql.scheduleRetry, id, token, [
      Math.max(0, Math.round(verdict.delayMs)),
      JSON.stringify(verdict.succeeded),
      verdict.error.message,
    ]);
  }

  fail(
    id: string,
    token: string,
    verdict: { error: Error; succeeded: readonly string[] },
  ): Promise<boolean> {
    return this.#fenced(this.#sql.fail, id, token, [
      JSON.stringify(verdict.succeeded),
      verdict.error.message,
      seconds(this.#keepFailedMs),
    ]);
  }

  async reclaimExpired(_options: { maxStalls: number }): Promise<number> {
    const result = await this.#query(this.#sql.reclaim, [QUEUE]);
    // Only consuming processes reclaim: they also delete the identities whose time is up.
    if (Date.now() - this.#lastSweep >= SWEEP_INTERVAL_MS) {
      this.#lastSweep = Date.now();
      await this.#pool.query(this.#sql.sweepIdentities);
    }
    return result.rowCount ?? 0;
  }

  async failed(options: FailedListOptions = {}): Promise<FailedAlert[]> {
    const { limit, offset } = resolveFailedListOptions(options);
    const { rows } = await this.#query(this.#sql.failed, [QUEUE, limit, offset]);
    return (rows as { id: string; data: AlertJobData; completed_on: Date | null }[]).map((row) => {
      const entry = JSON.parse(row.data.entry) as QueuedAlert;
      return {
        id: row.id,
        alertId: entry.id,
        alert: entry.alert,
        error: row.data.error ?? '',
        succeededHandlers: [...row.data.succeeded],
        tries: row.data.tries,
        receivedAt: new Date(entry.receivedAt),
        failedAt: row.completed_on ?? undefined,
      };
    });
  }

  async retry(id: string): Promise<void> {
    const result = await this.#query(this.#sql.retry, [QUEUE, id]);
    if (result.rowCount === 0) throw new TypeError(`No failed alert with id "${id}".`);
  }

  async retryAll(): Promise<number> {
    const result = await this.#query(this.#sql.retry, [QUEUE, null]);
    return result.rowCount ?? 0;
  }

  async counts(): Promise<QueueCounts> {
    const { rows } = await this.#query(this.#sql.counts, [QUEUE]);
    return { ...(rows[0] as QueueCounts) };
  }

  async health(): Promise<QueueHealth> {
    try {
      await this.#pool.query('SELECT 1');
      return { reachable: true };
    } catch (error) {
      return { reachable: false, error: `Postgres at ${this.#where}: ${describe(error)}` };
    }
  }

  async depth(): Promise<number> {
    const { rows } = await this.#query(this.#sql.depth, [QUEUE]);
    return (rows[0] as { depth: number }).depth;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const started = this.#ready;
    if (started !== undefined) {
      await started.catch(() => undefined);
      await this.boss.stop({ graceful: false, close: false }).catch(() => undefined);
    }
    if (this.#ownsPool) await this.#pool.end();
  }
}

/**
 * The `AlertStore` of `@churn-risk/postgres` (SPEC 15 and 17): alerts are pg-boss jobs in
 * `<schema>.job`, the alert identities a table beside them. `accept` records the identity and
 * sends the job in one transaction; `take` leases a due job to one taker, and every later write
 * is fenced by the taker's token. Core's `createDurableQueue` runs it; most apps call
 * `createPostgresQueue` instead.
 *
 * @example
 * const store = createPostgresStore({ connection: process.env.DATABASE_URL! });
 * const queue = createDurableQueue(store, { leaseMs: 30_000 });
 */
export function createPostgresStore(options: PostgresQueueOptions): PostgresAlertStore {
  return new PgAlertStore(options);
}
