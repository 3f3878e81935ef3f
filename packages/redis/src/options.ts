import { isCluster, type RedisConnection } from './connection.js';

/** Options of `createRedisQueue`, SPEC section 9. */
export interface RedisQueueOptions {
  /**
   * A `redis://` URL, ioredis options, an ioredis instance or an ioredis `Cluster` (an instance
   * is never closed by us). Required.
   */
  connection: RedisConnection;
  /**
   * Prefix of every key. Default `churn-risk`. With a `Cluster` connection it must carry a hash tag
   * (`{churn-risk}`), so that all of the queue's keys land in one slot (a `TypeError` otherwise).
   */
  prefix?: string;
  /**
   * How long a worker holds an alert before another process may take it over, in ms. The lock is
   * renewed while the handlers run; a process that dies loses it after this time, and a consuming
   * process takes the alert over at its next stalled check: at most `lockDurationMs +
   * stalledIntervalMs` after the death (60 s with the defaults). Default 30,000.
   */
  lockDurationMs?: number;
  /**
   * An alert whose worker died mid-alert more than this many times (it crashes every process that
   * takes it: an OOM on one payload) goes to the failed set, with an error that says it stalled,
   * and `onError` is called once. Default 3.
   */
  maxStalls?: number;
  /** Longest wait for Redis to record an alert; beyond it the answer is 503. Default 2,000. */
  enqueueTimeoutMs?: number;
  /** How long an alert identity is remembered for de-duplication, in ms. Default 72 hours. */
  dedupeTtlMs?: number;
  /** How long an alert that failed after its retries stays in the failed set, in ms. Default 30 days. */
  keepFailedMs?: number;
  /**
   * How often a consuming process looks for alerts whose worker died, in ms. Default
   * `min(lockDurationMs, 30000)`.
   */
  stalledIntervalMs?: number;
}

/** Options with every default filled in and checked. */
export interface ResolvedRedisQueueOptions {
  connection: RedisConnection;
  prefix: string;
  lockDurationMs: number;
  enqueueTimeoutMs: number;
  dedupeTtlMs: number;
  keepFailedMs: number;
  stalledIntervalMs: number;
  maxStalls: number;
}

/** The defaults of SPEC section 9. */
export const REDIS_QUEUE_DEFAULTS = Object.freeze({
  prefix: 'churn-risk',
  lockDurationMs: 30_000,
  enqueueTimeoutMs: 2_000,
  dedupeTtlMs: 72 * 3_600_000,
  keepFailedMs: 30 * 24 * 3_600_000,
  maxStalls: 3,
});

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new TypeError(`${name} must be a whole number of milliseconds, at least 1.`);
  }
  return value;
}

/** Fills in the defaults; a bad option is a `TypeError` at creation. */
export function resolveRedisQueueOptions(options: RedisQueueOptions): ResolvedRedisQueueOptions {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) {
    throw new TypeError('createRedisQueue needs an options object with a `connection`.');
  }
  if ((options.connection as unknown) === undefined || (options.connection as unknown) === null) {
    throw new TypeError('connection is required: a redis:// URL, ioredis options or an instance.');
  }
  const prefix = options.prefix ?? REDIS_QUEUE_DEFAULTS.prefix;
  if (typeof prefix !== 'string' || prefix === '' || /\s/.test(prefix)) {
    throw new TypeError('prefix must be a non-empty string without whitespace.');
  }
  if (isCluster(options.connection) && !/\{[^{}]+\}/.test(prefix)) {
    throw new TypeError(
      `With a Redis Cluster the prefix must carry a hash tag, such as "{churn-risk}" (got ` +
        `"${prefix}"), so that every key of the queue lands in one slot.`,
    );
  }
  const maxStalls = options.maxStalls ?? REDIS_QUEUE_DEFAULTS.maxStalls;
  if (!Number.isInteger(maxStalls) || maxStalls < 0) {
    throw new TypeError('maxStalls must be a whole number of at least 0.');
  }
  const lockDurationMs = positive(
    'lockDurationMs',
    options.lockDurationMs ?? REDIS_QUEUE_DEFAULTS.lockDurationMs,
  );
  return {
    connection: options.connection,
    prefix,
    lockDurationMs,
    enqueueTimeoutMs: positive(
      'enqueueTimeoutMs',
      options.enqueueTimeoutMs ?? REDIS_QUEUE_DEFAULTS.enqueueTimeoutMs,
    ),
    dedupeTtlMs: positive('dedupeTtlMs', options.dedupeTtlMs ?? REDIS_QUEUE_DEFAULTS.dedupeTtlMs),
    keepFailedMs: positive(
      'keepFailedMs',
      options.keepFailedMs ?? REDIS_QUEUE_DEFAULTS.keepFailedMs,
    ),
    stalledIntervalMs: positive(
      'stalledIntervalMs',
      options.stalledIntervalMs ?? Math.min(lockDurationMs, 30_000),
    ),
    maxStalls,
  };
}
