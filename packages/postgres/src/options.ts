import { RENAMED_OPTIONS, refuseUnknownOptions } from '@churn-risk/core/store';
import pg from 'pg';

/**
 * Where the store's database is: a `postgres://` URL, `pg` pool options, or a `pg.Pool` (a pool
 * passed in is used as it is and never closed by us).
 */
export type PostgresConnection = string | pg.PoolConfig | pg.Pool;

/** Options of `createPostgresQueue` and `createPostgresStore`. */
export interface PostgresQueueOptions {
  /** A `postgres://` URL, `pg` pool options, or a `pg.Pool` (never closed by us). Required. */
  connection: PostgresConnection;
  /**
   * The schema that holds the store's tables. Created at start when it is missing (which needs the
   * database's CREATE right); a schema that exists is used as it is, so a role that owns only that
   * schema is enough. Default `churn_risk`.
   */
  schema?: string;
  /**
   * How long a worker holds an alert before another process may take it over, in ms. The lease is
   * renewed every half of it while the handlers run; a process that dies loses it after this time,
   * and a consuming process takes the alert over at its next reclaim: at most `leaseMs +
   * reclaimIntervalMs` after the death (60 s with the defaults). Default 30,000.
   */
  leaseMs?: number;
  /**
   * How often a consuming process puts back alerts whose lease expired, in ms. Default
   * `min(leaseMs, 30000)`.
   */
  reclaimIntervalMs?: number;
  /**
   * An alert whose worker died mid-alert more than this many times goes to the failed set, with an
   * error that says it stalled, and `onError` is called once. Default 3.
   */
  maxStalls?: number;
  /**
   * Longest wait for the database to commit an alert; beyond it the answer is 503. It bounds the
   * accept only (connecting and `health()` have bounds of their own). Default 2,000.
   */
  enqueueTimeoutMs?: number;
  /** How long an alert identity is remembered for de-duplication, in ms. Default 72 hours. */
  dedupeTtlMs?: number;
  /** How long an alert that failed after its last try stays in the failed set, in ms. Default 30 days. */
  keepFailedMs?: number;
  /**
   * The longest an idle consuming process waits before it asks the database again, in ms. With
   * `listen` on, a new alert wakes it at once (`LISTEN`/`NOTIFY`) and a delayed retry at its due
   * time: the poll is only the fallback, and an idle process queries no more often than this.
   * With `listen: false` it is the most an idle process adds between a `202` and a handler's
   * start. Default 2,000.
   */
  pollIntervalMs?: number;
  /**
   * Whether a consuming process keeps one `LISTEN` connection (a dedicated client, reconnected
   * with backoff when it drops) to be woken when an alert is accepted or a retry falls due. Turn
   * it off behind a transaction-pooling PgBouncer, where `LISTEN` does not work: the poll
   * (`pollIntervalMs`) then finds the alerts. Default true.
   */
  listen?: boolean;
}

/** Options with every default filled in and checked. */
export interface ResolvedPostgresOptions {
  connection: PostgresConnection;
  schema: string;
  leaseMs: number;
  reclaimIntervalMs: number;
  maxStalls: number;
  enqueueTimeoutMs: number;
  dedupeTtlMs: number;
  keepFailedMs: number;
  pollIntervalMs: number;
  listen: boolean;
}

/** The defaults of `createPostgresQueue` and `createPostgresStore`. */
export const POSTGRES_QUEUE_DEFAULTS = Object.freeze({
  schema: 'churn_risk',
  leaseMs: 30_000,
  maxStalls: 3,
  enqueueTimeoutMs: 2_000,
  dedupeTtlMs: 72 * 3_600_000,
  keepFailedMs: 30 * 24 * 3_600_000,
  pollIntervalMs: 2_000,
  listen: true,
});

const OPTION_KEYS = [
  'connection',
  'schema',
  'leaseMs',
  'reclaimIntervalMs',
  'maxStalls',
  'enqueueTimeoutMs',
  'dedupeTtlMs',
  'keepFailedMs',
  'pollIntervalMs',
  'listen',
] as const;

function positive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(
      `${name} must be a whole number of milliseconds of at least 1, got ${String(value)}.`,
    );
  }
  return value;
}

/** True for a `pg.Pool` (or a subclass), which the store uses as it is and never closes. */
export function isPool(connection: unknown): connection is pg.Pool {
  return connection instanceof pg.Pool;
}

/**
 * What to do when the connection is missing: most often an environment variable that a build
 * step (`next build`) does not have, read by a queue made at module load.
 */
const MISSING_AT_BUILD =
  'Is its environment variable (DATABASE_URL?) set where this code runs? A build step such as ' +
  '`next build` loads your modules without the run-time environment: make the queue on the first ' +
  'request (in a function your route calls), not at module load.';

function checkConnection(connection: unknown): PostgresConnection {
  if (typeof connection === 'string') {
    if (!/^postgres(ql)?:\/\//.test(connection)) {
      throw new TypeError(
        'connection must be a postgres:// URL, pg pool options or a pg.Pool; the string given ' +
          'does not start with postgres://.',
      );
    }
    return connection;
  }
  if (typeof connection === 'object' && connection !== null) return connection;
  throw new TypeError(
    `connection is required: a postgres:// URL, pg pool options or a pg.Pool (got ${connection === null ? 'null' : typeof connection}). ` +
      MISSING_AT_BUILD,
  );
}

/**
 * Fills in the defaults. A bad option, or one this package does not know (`lockDurationMs` is
 * `leaseMs` now), is a `TypeError` at creation.
 */
export function resolvePostgresOptions(options: PostgresQueueOptions): ResolvedPostgresOptions {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) {
    throw new TypeError('createPostgresQueue needs an options object with a `connection`.');
  }
  refuseUnknownOptions('createPostgresQueue', options, OPTION_KEYS, RENAMED_OPTIONS);
  const connection = checkConnection(options.connection);
  const schema: unknown = options.schema ?? POSTGRES_QUEUE_DEFAULTS.schema;
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,49}$/.test(schema)) {
    throw new TypeError(
      `schema must be a lower-case SQL name (letters, digits and _, at most 50), got ${JSON.stringify(schema)}.`,
    );
  }
  const maxStalls = options.maxStalls ?? POSTGRES_QUEUE_DEFAULTS.maxStalls;
  if (!Number.isSafeInteger(maxStalls) || maxStalls < 0) {
    throw new TypeError('maxStalls must be a whole number of at least 0.');
  }
  const listen: unknown = options.listen ?? POSTGRES_QUEUE_DEFAULTS.listen;
  if (typeof listen !== 'boolean') {
    throw new TypeError(`listen must be true or false, got ${String(listen)}.`);
  }
  const leaseMs = positive('leaseMs', options.leaseMs ?? POSTGRES_QUEUE_DEFAULTS.leaseMs);
  const defaults = POSTGRES_QUEUE_DEFAULTS;
  return {
    connection,
    schema,
    leaseMs,
    reclaimIntervalMs: positive(
      'reclaimIntervalMs',
      options.reclaimIntervalMs ?? Math.min(leaseMs, 30_000),
    ),
    maxStalls,
    enqueueTimeoutMs: positive(
      'enqueueTimeoutMs',
      options.enqueueTimeoutMs ?? defaults.enqueueTimeoutMs,
    ),
    dedupeTtlMs: positive('dedupeTtlMs', options.dedupeTtlMs ?? defaults.dedupeTtlMs),
    keepFailedMs: positive('keepFailedMs', options.keepFailedMs ?? defaults.keepFailedMs),
    pollIntervalMs: positive('pollIntervalMs', options.pollIntervalMs ?? defaults.pollIntervalMs),
    listen,
  };
}
