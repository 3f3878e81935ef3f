import {
  resolveFailedListOptions,
  withTimeout,
  type AlertRecord,
  type AlertStore,
  type AlertVerdict,
  type StoreAcceptOptions,
  type TakeOptions,
  type FailedListOptions,
  type QueueCounts,
  type QueueHealth,
} from '@churn-risk/core/store';
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CONNECT_TIMEOUT_MS, describeConnection, openPool, withClient } from './connection.js';
import { PostgresSchemaError, PostgresStoreError } from './errors.js';
import { checkTables, migrate } from './migrate.js';
import { resolvePostgresOptions, type PostgresQueueOptions } from './options.js';
import { channelOf, statements, type Statements } from './sql.js';
import { Listener, WakeUp } from './wake-up.js';

/** The Postgres `AlertStore`. */
export interface PostgresAlertStore extends AlertStore {
  readonly kind: 'postgres';
  /** The schema of the store's tables. */
  readonly schema: string;
  /** Puts back every alert whose lease expired (marked lapsed), and keeps the tables small. */
  reclaimExpired(): Promise<number>;
  /** Ends a take that waits for work (`LISTEN`, or the poll), and stops listening. */
  stopTaking(): Promise<void>;
}

/** How a store starts: `migrate` (the default) creates what is missing; `check` only checks (the CLI). */
interface PostgresStoreMode {
  tables: 'migrate' | 'check';
}

/** How long `health()` waits for its answer. */
const HEALTH_TIMEOUT_MS = 5_000;
/** How often a consuming process deletes expired identities and old failed alerts, at most. */
const SWEEP_INTERVAL_MS = 60_000;
/** Rows one housekeeping statement deletes, at most, and statements per sweep. */
const SWEEP_BATCH = 5_000;
const SWEEP_BATCHES = 20;
/**
 * SQLSTATEs of a named statement that the server connection does not hold (`26000`) or holds
 * already (`42P05`): refused before it runs, so it is safe to run again unnamed.
 */
const UNPREPARED = new Set(['26000', '42P05']);
/** A job id: a record's `jobId`, what every write names. */
const JOB_ID = /^[1-9][0-9]{0,17}$/;

interface AlertRow {
  id: string | null;
  entry: string | null;
  tries: number | null;
  succeeded: string[] | null;
  stalls: number | null;
  lapsed: boolean | null;
  /** A take in order per user: the alert's user (null: accepted without order). */
  user_id?: string | null;
  /** A take in order per user: the newest time accepted for the user (ms). */
  newest?: number | null;
}

/** A row of `completeAndTake`: whether it completed, and what it took. */
interface CompletionRow extends AlertRow {
  completed: number;
  /** In order per user: the completed alert's user's next alert was moved up to wait. */
  released?: boolean | null;
  /** In order per user: the take went on with the completed alert's user's next alert. */
  followed?: boolean | null;
}

function alertRecord(row: AlertRow | undefined): AlertRecord<'taken'> | undefined {
  if (row?.id == null || row.entry === null) return undefined;
  const taken: AlertRecord<'taken'> = {
    ...(JSON.parse(row.entry) as AlertRecord<'accepted'>),
    jobId: row.id,
    tries: row.tries ?? 0,
    succeeded: row.succeeded ?? [],
    stalls: row.stalls ?? 0,
    lapsed: row.lapsed ?? false,
  };
  return row.newest == null ? taken : { ...taken, newest: row.newest };
}

/**
 * How many alerts of one user a completing take goes on with in a row, before it moves the user's
 * next alert up to wait in turn with every other user's (so one user's burst holds one consumer
 * slot for that long at most, and never starves the others).
 */
const MAX_STREAK = 16;
/**
 * The streaks remembered at most (every verdict forgets its alert's; an alert whose lease was lost
 * leaves its entry behind).
 */
const MAX_STREAKS = 10_000;

class PgAlertStore implements PostgresAlertStore {
  readonly kind = 'postgres';
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #sql: Statements;
  readonly #where: string;
  readonly #mode: PostgresStoreMode;
  readonly #keepFailedMs: number;
  readonly #enqueueTimeoutMs: number;
  readonly #pollIntervalMs: number;
  readonly #wakeUp = new WakeUp();
  /** Completing takes that went on with a user's next alert: its job id, how many in a row. */
  readonly #streaks = new Map<string, number>();
  /** The name of each statement's text; undefined once the connections cannot keep names. */
  #names: Map<string, string> | undefined = new Map();
  readonly #listener: Listener | undefined;
  #ready: Promise<void> | undefined;
  #stopped = false;
  #closed = false;
  #lastSweep = 0;
  #sweeping: Promise<void> | undefined;

  constructor(options: PostgresQueueOptions, mode: PostgresStoreMode) {
    const resolved = resolvePostgresOptions(options);
    this.schema = resolved.schema;
    this.#mode = mode;
    this.#keepFailedMs = resolved.keepFailedMs;
    this.#enqueueTimeoutMs = resolved.enqueueTimeoutMs;
    this.#pollIntervalMs = resolved.pollIntervalMs;
    this.#where = describeConnection(resolved.connection);
    const { pool, owned } = openPool(resolved.connection, CONNECT_TIMEOUT_MS);
    this.#pool = pool;
    this.#ownsPool = owned;
    this.#sql = statements(resolved.schema);
    this.#listener = resolved.listen
      ? new Listener(resolved.connection, channelOf(resolved.schema), this.#wakeUp)
      : undefined;
    // Migrations run at start, in the background: the first accept need not wait for them.
    if (mode.tables === 'migrate') this.#start().catch(() => undefined);
  }

  /** The store's error for a database error (the place named; no user, no password). */
  #error(error: unknown): Error {
    if (error instanceof PostgresStoreError || error instanceof PostgresSchemaError) return error;
    return new PostgresStoreError(this.#where, error);
  }

  /** The tables, migrated (or checked) once; a failure is tried again at the next call. */
  #start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('The Postgres store is closed.'));
    this.#ready ??= (
      this.#mode.tables === 'migrate'
        ? migrate(this.#pool, this.schema, this.#sql)
        : checkTables(this.#pool, this.schema, this.#sql)
    ).catch((error: unknown) => {
      this.#ready = undefined;
      throw this.#error(error);
    });
    return this.#ready;
  }

  /**
   * Runs one of the store's statements on `client` (the pool, or a checked-out connection), named
   * by a hash of its text: `pg` prepares it once per connection, and PostgreSQL then parses it no
   * more, and plans it no more once it settles on a generic plan (after five executions; the same
   * index scans), as graphile-worker does. On a busy queue, parsing and planning are most of the CPU
   * per alert. The name comes from the text, so that stores of other schemas, or other versions
   * of this package, can share a pool.
   *
   * Behind a transaction-pooling PgBouncer that does not track prepared statements (before 1.21,
   * or with `max_prepared_statements = 0`), a named statement reaches a server connection that
   * did not prepare it, or one that did: the server refuses it before running it, and the store
   * runs it again unnamed, and every statement after it.
   */
  async #execute<R extends pg.QueryResultRow>(
    client: pg.Pool | pg.PoolClient,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    if (this.#names === undefined) return client.query<R>(text, values);
    let name = this.#names.get(text);
    if (name === undefined) {
      // Short of PostgreSQL's 63-byte limit on names, beyond which it cuts them.
      name = `churn_risk_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      this.#names.set(text, name);
    }
    try {
      return await client.query<R>({ name, text, values });
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || !UNPREPARED.has(code)) throw error;
      this.#names = undefined;
      return client.query<R>(text, values);
    }
  }

  async #query<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    await this.#start();
    try {
      return await this.#execute<R>(this.#pool, text, values);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async accept(
    entry: AlertRecord<'accepted'>,
    options: StoreAcceptOptions,
  ): Promise<'accepted' | 'duplicate'> {
    const asked = Date.now();
    await this.#start();
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw this.#error(error);
    }
    // A connection that came after the accept's time-out (core answered 503 meanwhile) stores
    // nothing: the sender resends, and the alert is not stored behind its back.
    if (Date.now() - asked > this.#enqueueTimeoutMs) {
      client.release();
      throw new PostgresStoreError(
        this.#where,
        new Error('no connection was free within enqueueTimeoutMs'),
      );
    }
    // A refused statement leaves a usable connection (a lost one is dropped by withClient).
    return withClient(
      client,
      async (held) => {
        const { order } = options;
        const values: unknown[] = [
          entry.id,
          JSON.stringify(entry),
          options.dedupeTtlMs,
          options.first === true,
        ];
        if (order !== undefined) values.push(order.user, Math.round(order.at));
        const text = order === undefined ? this.#sql.accept : this.#sql.acceptInOrder;
        const { rowCount } = await this.#execute(held, text, values);
        if (rowCount === 0) return 'duplicate';
        this.#wakeUp.now(); // this process's own waiting take looks at once
        return 'accepted';
      },
      () => false,
    ).catch((error: unknown) => {
      throw this.#error(error);
    });
  }

  /**
   * Takes the oldest due alert. When none is due, waits for work (a `NOTIFY`, this process's own
   * accept, the due time of a delayed alert), asking again each time, and answers undefined once
   * `pollIntervalMs` passed without work: an idle process asks once per `pollIntervalMs`. Only
   * one take of a process waits; while it does, another answers undefined at once, without a
   * query (nothing is due that the waiting one would not be woken for).
   */
  async take(options: TakeOptions): Promise<AlertRecord<'taken'> | undefined> {
    // Another take of this process waits for work: nothing is due that it would not be woken for
    // (a take that must not wait, a sweep's, asks all the same).
    if (this.#stopped || (options.wait !== false && this.#wakeUp.sleeping())) return undefined;
    this.#listener?.start();
    const started = Date.now();
    const text = options.perUser === true ? this.#sql.takeInOrder : this.#sql.take;
    for (;;) {
      const seen = this.#wakeUp.count;
      const { rows } = await this.#query<AlertRow & { due_in_ms: number | null }>(text, [
        options.token,
        options.leaseMs,
      ]);
      const row = rows[0];
      const taken = alertRecord(row);
      if (taken !== undefined || options.wait === false) return taken;
      if (this.#isStopped() || this.#wakeUp.sleeping()) return undefined;
      if (this.#wakeUp.count !== seen) continue; // woken while asking: ask again
      const left = this.#pollIntervalMs - (Date.now() - started);
      if (left <= 0) return undefined;
      const due = row?.due_in_ms ?? Infinity;
      await this.#wakeUp.sleep(Math.max(1, Math.min(left, Math.ceil(due))));
      // Once the poll interval is over, core asks again at once: that is the interval's query.
      if (this.#isStopped() || Date.now() - started >= this.#pollIntervalMs) return undefined;
    }
  }

  /**
   * A write ended the lease of the head of a user's line and moved the user's next alert up to
   * wait (as Postgres answered it: nothing of a line is kept in this process), and no take of the
   * same statement took it: this process's waiting take looks at once.
   */
  #released(released: boolean | null | undefined): void {
    if (released === true) this.#wakeUp.now();
  }

  /** Whether `stopTaking` was called (read through a call: it changes during the awaits). */
  #isStopped(): boolean {
    return this.#stopped;
  }

  async #fenced(text: string, id: string, token: string, rest: unknown[]): Promise<boolean> {
    if (!JOB_ID.test(id)) return false;
    const result = await this.#query(text, [id, token, ...rest]);
    return result.rowCount === 1;
  }

  extend(id: string, token: string, leaseMs: number, stalls?: number): Promise<boolean> {
    return this.#fenced(this.#sql.extend, id, token, [leaseMs, stalls ?? null]);
  }

  async complete(id: string, token: string): Promise<boolean> {
    this.#streaks.delete(id);
    if (!JOB_ID.test(id)) return false;
    const { rows } = await this.#query<{ released: boolean }>(this.#sql.complete, [id, token]);
    const row = rows[0];
    this.#released(row?.released);
    return row !== undefined;
  }

  async completeAndTake(
    id: string,
    token: string,
    next: TakeOptions,
  ): ReturnType<AlertStore['completeAndTake']> {
    if (this.#stopped) return { completed: await this.complete(id, token), next: undefined };
    // An id that is no job id completes nothing; the take happens all the same.
    const values: unknown[] = [JOB_ID.test(id) ? id : '0', token, next.token, next.leaseMs];
    if (next.perUser !== true) {
      const { rows } = await this.#query<CompletionRow>(this.#sql.completeAndTake, values);
      const row = rows[0];
      return { completed: row?.completed === 1, next: alertRecord(row) };
    }
    const streak = this.#streaks.get(id) ?? 0;
    this.#streaks.delete(id);
    values.push(streak < MAX_STREAK);
    const { rows } = await this.#query<CompletionRow>(this.#sql.completeAndTakeInOrder, values);
    const row = rows[0];
    this.#released(row?.released);
    const taken = alertRecord(row);
    if (taken !== undefined && row?.followed === true) {
      if (this.#streaks.size >= MAX_STREAKS) this.#streaks.clear();
      this.#streaks.set(taken.jobId, streak + 1);
    }
    return { completed: row?.completed === 1, next: taken };
  }

  async scheduleRetry(
    id: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'retry' }>,
  ): Promise<boolean> {
    // Its lease ends here: taken again, the alert starts a streak of its own.
    this.#streaks.delete(id);
    const delayMs = Math.max(0, Math.round(verdict.delayMs));
    const written = await this.#fenced(this.#sql.scheduleRetry, id, token, [
      delayMs,
      verdict.tries,
      [...verdict.succeeded],
      verdict.error.message,
    ]);
    if (written) this.#wakeUp.in(delayMs);
    return written;
  }

  async fail(
    id: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'failed' }>,
  ): Promise<boolean> {
    this.#streaks.delete(id);
    if (!JOB_ID.test(id)) return false;
    const { rows } = await this.#query<{ released: boolean }>(this.#sql.fail, [
      id,
      token,
      verdict.tries,
      [...verdict.succeeded],
      verdict.error.message,
    ]);
    const row = rows[0];
    this.#released(row?.released);
    return row !== undefined;
  }

  async reclaimExpired(): Promise<number> {
    const { rows } = await this.#query<{ reclaimed: number }>(this.#sql.reclaim);
    // Only consuming processes reclaim: they also keep the tables small, once a minute at most.
    if (this.#sweeping === undefined && Date.now() - this.#lastSweep >= SWEEP_INTERVAL_MS) {
      this.#lastSweep = Date.now();
      this.#sweeping = this.#sweep().finally(() => {
        this.#sweeping = undefined;
      });
    }
    return rows[0]?.reclaimed ?? 0;
  }

  /**
   * Deletes expired identities, the newest times of users that expired, and failed alerts older
   * than `keepFailedMs`, in bounded batches.
   */
  async #sweep(): Promise<void> {
    try {
      for (let i = 0; i < SWEEP_BATCHES && !this.#closed; i++) {
        const { rowCount } = await this.#pool.query(this.#sql.sweepIdentities, [SWEEP_BATCH]);
        if ((rowCount ?? 0) < SWEEP_BATCH) break;
      }
      for (let i = 0; i < SWEEP_BATCHES && !this.#closed; i++) {
        const { rowCount } = await this.#pool.query(this.#sql.sweepUsers, [SWEEP_BATCH]);
        if ((rowCount ?? 0) < SWEEP_BATCH) break;
      }
      for (let i = 0; i < SWEEP_BATCHES && !this.#closed; i++) {
        const { rowCount } = await this.#pool.query(this.#sql.sweepFailed, [
          this.#keepFailedMs,
          SWEEP_BATCH,
        ]);
        if ((rowCount ?? 0) < SWEEP_BATCH) break;
      }
    } catch {
      // The database is down: the next sweep, a minute later, tries again.
    }
  }

  async failed(options: FailedListOptions = {}): Promise<AlertRecord<'failed'>[]> {
    const { limit, offset } = resolveFailedListOptions(options);
    interface FailedRow {
      id: string;
      entry: string;
      error: string | null;
      succeeded: string[];
      tries: number;
      failed_at: Date | null;
    }
    const { rows } = await this.#query<FailedRow>(this.#sql.failed, [limit, offset]);
    return rows.map((row) => {
      return {
        ...(JSON.parse(row.entry) as AlertRecord<'accepted'>),
        jobId: row.id,
        tries: row.tries,
        succeeded: [...row.succeeded],
        error: row.error ?? '',
        failedAt: row.failed_at?.getTime(),
      };
    });
  }

  async retry(id: string): Promise<void> {
    const text = JOB_ID.test(id) ? this.#sql.retryById : this.#sql.retryByAlert;
    const { rows } = await this.#query<{ retried: number }>(text, [id]);
    if ((rows[0]?.retried ?? 0) === 0) throw new TypeError(`No failed alert with id "${id}".`);
    this.#wakeUp.now();
  }

  async retryAll(): Promise<number> {
    const { rows } = await this.#query<{ retried: number }>(this.#sql.retryAll);
    const retried = rows[0]?.retried ?? 0;
    if (retried > 0) this.#wakeUp.now();
    return retried;
  }

  async counts(): Promise<QueueCounts> {
    const { rows } = await this.#query<QueueCounts>(this.#sql.counts);
    const row = rows[0];
    if (row === undefined) throw this.#error(new Error('no counts'));
    return { ...row };
  }

  async depth(): Promise<number> {
    const { rows } = await this.#query<{ depth: number }>(this.#sql.depth);
    return rows[0]?.depth ?? 0;
  }

  async nextDueInMs(): Promise<number | undefined> {
    const { rows } = await this.#query<{ due_in_ms: number | null }>(this.#sql.nextDue);
    const due = rows[0]?.due_in_ms ?? null;
    return due === null ? undefined : Math.max(0, Math.ceil(due));
  }

  /**
   * Whether the store answers and can write: its tables are ready (migrated at start), this role
   * may write them, and the session is not read-only. `reachable: false` carries the reason, in
   * the server's words where it gave one (never a password; a user name only in the statement
   * that fixes a schema the role may not create).
   */
  async health(): Promise<QueueHealth> {
    const check = async (): Promise<QueueHealth> => {
      if (this.#mode.tables === 'check') {
        await this.#pool.query('SELECT 1').catch((error: unknown) => {
          throw this.#error(error);
        });
        return { reachable: true };
      }
      const { rows } = await this.#query<{ granted: boolean; read_only: boolean }>(
        this.#sql.writable,
      );
      const row = rows[0];
      if (row?.read_only === true) {
        return this.#down(
          'the database is read-only (a standby, or default_transaction_read_only)',
        );
      }
      if (row?.granted !== true) {
        return this.#down(
          `permission denied: this role cannot read and write the tables ${this.schema}.alerts ` +
            `and ${this.schema}.alert_identities (SELECT, INSERT, UPDATE, DELETE)`,
        );
      }
      return { reachable: true };
    };
    try {
      return await withTimeout(
        check(),
        HEALTH_TIMEOUT_MS,
        `Postgres at ${this.#where} did not answer`,
      );
    } catch (error) {
      return { reachable: false, error: this.#error(error).message };
    }
  }

  #down(reason: string): QueueHealth {
    return { reachable: false, error: `Postgres at ${this.#where}: ${reason}` };
  }

  stopTaking(): Promise<void> {
    this.#stopped = true;
    this.#wakeUp.now(); // a waiting take answers now
    return this.#listener?.stop() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.stopTaking();
    this.#closed = true;
    await this.#sweeping;
    await this.#ready?.catch(() => undefined);
    if (this.#ownsPool) await this.#pool.end();
  }
}

/**
 * The `AlertStore` of `@churn-risk/postgres`, on its own tables in the
 * schema (migrated at start). `accept` records the identity and the alert in one statement and
 * notifies the consumers; `take` leases the oldest due alert (`FOR UPDATE SKIP LOCKED`) and waits
 * for work when none is due; every later write is fenced by the taker's token and the lease's
 * end. In order per user (`order` on accept, `perUser` on take), the take holds the alert's user
 * on the alert's own row (a unique index allows one holder per user) and the completion or
 * failure releases it in its own write. Core's `createDurableQueue` runs it; most apps call
 * `createPostgresQueue` instead.
 *
 * @example
 * const store = createPostgresStore({ connection: process.env.DATABASE_URL! });
 * const queue = createDurableQueue(store, { leaseMs: 30_000 });
 */
export function createPostgresStore(options: PostgresQueueOptions): PostgresAlertStore {
  return new PgAlertStore(options, { tables: 'migrate' });
}

/**
 * A store that creates and migrates nothing: it checks that the schema holds the store's tables
 * (a `PostgresSchemaError` naming the schema when not). For tools that read an existing schema
 * (`churn-risk-postgres failed list|retry`).
 */
export function openPostgresStore(options: PostgresQueueOptions): PostgresAlertStore {
  return new PgAlertStore(options, { tables: 'check' });
}
