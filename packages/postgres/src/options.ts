import pg from 'pg';

/**
 * Where the store's database is: a `postgres://` URL, `pg` pool options, or a `pg.Pool` (a pool
 * passed in is used as it is and never closed by us).
 */
export type PostgresConnection = string | pg.PoolConfig | pg.Pool;

/** Options of `createPostgresQueue` and `createPostgresStore`, SPEC section 15. */
export interface PostgresQueueOptions {
  /** A `postgres://` URL, `pg` pool options, or a `pg.Pool` (never closed by us). Required. */
  connection: PostgresConnection;
  /**
   * The schema that holds pg-boss's tables and the alert identities. Created on first use, with its
   * tables; nothing else of the database is touched. Default `churn_risk`.
   */
  schema?: string;
  /**
   * How long a worker holds an alert before another process may take it over, in ms. The lease is
   * renewed while the handlers run; a process that dies loses it after this time, and a consuming
   * process takes the alert over at its next reclaim: at most `lockDurationMs + reclaimIntervalMs`
   * after the death (60 s with the defaults). Default 30,000.
   */
  lockDurationMs?: number;
  /**
   * An alert whose worker died mid-alert more than this many times goes to the failed set, with an
   * error that says it stalled, and `onError` is called once. Default 3.
   */
  maxStalls?: number;
  /** Longest wait for the database to commit an alert; beyond it the answer is 503. Default 2,000. */
  enqueueTimeoutMs?: number;
  /** How long an alert identity is remembered for de-duplication, in ms. Default 72 hours. */
  dedupeTtlMs?: number;
  /** How long an alert that failed after its last try stays in the failed set, in ms. Default 30 days. */
  keepFailedMs?: number;
  /**
   * How often a consuming process looks for alerts whose worker died, in ms. Default
   * `min(lockDurationMs, 30000)`.
   */
  reclaimIntervalMs?: number;
  /**
   * How long a consuming process waits before asking Postgres again when nothing was due, in ms:
   * the most an idle worker adds between an alert's `202` and its handler's start (each poll is
   * one indexed query). Default 250.
   */
  pollIntervalMs?: number;
}

/** Options with every default filled in and checked. */
export interface ResolvedPostgresOptions {
  connection: PostgresConnection;
  schema: string;
  lockDurationMs: number;
  maxStalls: number;
  enqueueTimeoutMs: number;
  dedupeTtlMs: number;
  keepFailedMs: number;
  reclaimIntervalMs: number;
  pollIntervalMs: number;
}

/** The defaults of SPEC section 15. */
export const POSTGRES_QUEUE_DEFAULTS = Object.freeze({
  schema: 'churn_risk',
  lockDurationMs: 30_000,
  maxStalls: 3,
  enqueueTimeoutMs: 2_000,
  dedupeTtlMs: 72 * 3_600_000,
  keepFailedMs: 30 * 24 * 3_600_000,
  pollIntervalMs: 250,
});

/** pg-boss stores a job's `deletion_seconds` as a 32-bit integer. */
const MAX_KEEP_MS = 2_147_483_647_000;

function positive(name: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new TypeError(
      `${name} must be a whole number of milliseconds from 1 to ${String(max)}, got ${String(value)}.`,
    );
  }
  return value;
}

/** True for a `pg.Pool` (or a subclass), which the store uses as it is and never closes. */
export function isPool(connection: unknown): connection is pg.Pool {
  return connection instanceof pg.Pool;
}

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
  throw new TypeError('connection is required: a postgres:// URL, pg pool options or a pg.Pool.');
}

/** Fills in the defaults; a bad option is a `TypeError` at creation. */
export function resolvePostgresOptions(options: PostgresQueueOptions): ResolvedPostgresOptions {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) {
    throw new TypeError('createPostgresQueue needs an options object with a `connection`.');
  }
  const connection = checkConnection(options.connection);
  const schema: unknown = options.schema ?? POSTGRES_QUEUE_DEFAULTS.schema;
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,49}$/.test(schema)) {
    throw new TypeError(
      `schema must be a lower-case SQL name (letters, digits and _, at most 50), got ${JSON.stringify(schema)}.`,
    );
  }
  const maxStalls = options.maxStalls ?? POSTGRES_QUEUE_DEFAULTS.maxStalls;
  if (!Number.isInteger(maxStalls) || maxStalls < 0) {
    throw new TypeError('maxStalls must be a whole number of at least 0.');
  }
  const lockDurationMs = positive(
    'lockDurationMs',
    options.lockDurationMs ?? POSTGRES_QUEUE_DEFAULTS.lockDurationMs,
  );
  return {
    connection,
    schema,
    lockDurationMs,
    maxStalls,
    enqueueTimeoutMs: positive(
      'enqueueTimeoutMs',
      options.enqueueTimeoutMs ?? POSTGRES_QUEUE_DEFAULTS.enqueueTimeoutMs,
    ),
    dedupeTtlMs: positive(
      'dedupeTtlMs',
      options.dedupeTtlMs ?? POSTGRES_QUEUE_DEFAULTS.dedupeTtlMs,
    ),
    keepFailedMs: positive(
      'keepFailedMs',
      options.keepFailedMs ?? POSTGRES_QUEUE_DEFAULTS.keepFailedMs,
      MAX_KEEP_MS,
    ),
    reclaimIntervalMs: positive(
      'reclaimIntervalMs',
      options.reclaimIntervalMs ?? Math.min(lockDurationMs, 30_000),
    ),
    pollIntervalMs: positive(
      'pollIntervalMs',
      options.pollIntervalMs ?? POSTGRES_QUEUE_DEFAULTS.pollIntervalMs,
    ),
  };
}
