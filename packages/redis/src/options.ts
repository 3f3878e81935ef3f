import { RENAMED_OPTIONS, refuseUnknownOptions } from '@churn-risk/core/store';
import { isCluster, type RedisConnection } from './connection.js';

/** Options of `createRedisStore`: where the alerts live, and how BullMQ keeps them. */
export interface RedisStoreOptions {
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
   * How long a taker holds an alert (its lease: BullMQ's lock on the job), in ms. Core renews it
   * every half of it while the handlers run; a process that dies loses it after this time, and
   * the alert is put back at the next reclaim: at most `leaseMs + reclaimIntervalMs` after the
   * death (60 s with the defaults; see "Takeover time" in the Redis guide, docs/redis.md). Default 30,000.
   */
  leaseMs?: number;
  /** How long an alert identity is remembered for de-duplication, in ms. Default 72 hours. */
  dedupeTtlMs?: number;
  /** How long an alert that failed after its retries stays in the failed set, in ms. Default 30 days. */
  keepFailedMs?: number;
}

/** Options of `createRedisQueue`: the store's, and core's runner's. */
export interface RedisQueueOptions extends RedisStoreOptions {
  /**
   * How often a consuming process puts back the alerts whose taker died, in ms. Every reclaim does
   * the whole job (it is never skipped, however many processes share the queue), so a dead
   * taker's alert is taken over at most `leaseMs + reclaimIntervalMs` after its death. Default
   * `min(leaseMs, 30000)`.
   */
  reclaimIntervalMs?: number;
  /**
   * An alert whose taker died mid-alert more than this many times (it crashes every process that
   * takes it: an OOM on one payload) goes to the failed set, with an error that says it stalled,
   * and `onError` is called once. Default 3.
   */
  maxStalls?: number;
  /**
   * Longest wait for Redis to record an alert; beyond it the answer is 503. It bounds the accept
   * and nothing else (`health()` has a fixed bound of 2 s). Default 2,000.
   */
  enqueueTimeoutMs?: number;
}

/** Store options with every default filled in and checked. */
export interface ResolvedRedisStoreOptions {
  connection: RedisConnection;
  prefix: string;
  leaseMs: number;
  dedupeTtlMs: number;
  keepFailedMs: number;
}

/** Queue options with every default filled in and checked. */
export interface ResolvedRedisQueueOptions extends ResolvedRedisStoreOptions {
  reclaimIntervalMs: number;
  maxStalls: number;
  enqueueTimeoutMs: number;
}

/** The defaults of `createRedisQueue`. */
export const REDIS_QUEUE_DEFAULTS = Object.freeze({
  prefix: 'churn-risk',
  leaseMs: 30_000,
  enqueueTimeoutMs: 2_000,
  dedupeTtlMs: 72 * 3_600_000,
  keepFailedMs: 30 * 24 * 3_600_000,
  maxStalls: 3,
});

const STORE_KEYS = ['connection', 'prefix', 'leaseMs', 'dedupeTtlMs', 'keepFailedMs'] as const;
const QUEUE_KEYS = [...STORE_KEYS, 'reclaimIntervalMs', 'maxStalls', 'enqueueTimeoutMs'] as const;

/** Core's old and mistaken names, and options that mean nothing here, with what to use instead. */
const RENAMED = {
  ...RENAMED_OPTIONS,
  pollIntervalMs:
    "a Redis take waits on BullMQ's marker and is woken as soon as an alert is due: there is no " +
    'poll interval to set',
};
/** What createRedisStore says of the options only createRedisQueue (core's runner) applies. */
const QUEUE_ONLY = {
  reclaimIntervalMs: 'an option of createRedisQueue: core runs the reclaims',
  maxStalls: 'an option of createRedisQueue: core applies it',
  enqueueTimeoutMs: 'an option of createRedisQueue: core bounds the accept',
} as const;

function positive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TypeError(`${name} must be a whole number of milliseconds, at least 1.`);
  }
  return value;
}

function checkObject(where: string, options: unknown): asserts options is object {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${where} needs an options object with a \`connection\`.`);
  }
}

/** Fills in the store's defaults; a bad or unknown option is a `TypeError` at creation. */
export function resolveRedisStoreOptions(options: RedisStoreOptions): ResolvedRedisStoreOptions {
  checkObject('createRedisStore', options);
  refuseUnknownOptions('createRedisStore', options, STORE_KEYS, { ...RENAMED, ...QUEUE_ONLY });
  return resolveStore(options);
}

/** Fills in the queue's defaults; a bad or unknown option is a `TypeError` at creation. */
export function resolveRedisQueueOptions(options: RedisQueueOptions): ResolvedRedisQueueOptions {
  checkObject('createRedisQueue', options);
  refuseUnknownOptions('createRedisQueue', options, QUEUE_KEYS, RENAMED);
  const store = resolveStore(options);
  const maxStalls: unknown = options.maxStalls ?? REDIS_QUEUE_DEFAULTS.maxStalls;
  if (typeof maxStalls !== 'number' || !Number.isInteger(maxStalls) || maxStalls < 0) {
    throw new TypeError('maxStalls must be a whole number of at least 0.');
  }
  return {
    ...store,
    reclaimIntervalMs: positive(
      'reclaimIntervalMs',
      options.reclaimIntervalMs ?? Math.min(store.leaseMs, 30_000),
    ),
    maxStalls,
    enqueueTimeoutMs: positive(
      'enqueueTimeoutMs',
      options.enqueueTimeoutMs ?? REDIS_QUEUE_DEFAULTS.enqueueTimeoutMs,
    ),
  };
}

function resolveStore(options: RedisStoreOptions): ResolvedRedisStoreOptions {
  const connection: unknown = options.connection;
  if (connection === undefined || connection === null) {
    throw new TypeError(
      `connection is required: a redis:// URL, ioredis options or an instance (got ${String(connection)}). ` +
        'Is its environment variable (REDIS_URL?) set where this code runs? A build step such as ' +
        '`next build` loads your modules without the run-time environment: make the queue on the ' +
        'first request (in a function your route calls), not at module load.',
    );
  }
  const prefix: unknown = options.prefix ?? REDIS_QUEUE_DEFAULTS.prefix;
  if (typeof prefix !== 'string' || prefix === '' || /\s/.test(prefix)) {
    throw new TypeError('prefix must be a non-empty string without whitespace.');
  }
  if (isCluster(options.connection) && !/\{[^{}]+\}/.test(prefix)) {
    throw new TypeError(
      `With a Redis Cluster the prefix must carry a hash tag, such as "{churn-risk}" (got ` +
        `"${prefix}"), so that every key of the queue lands in one slot.`,
    );
  }
  return {
    connection: options.connection,
    prefix,
    leaseMs: positive('leaseMs', options.leaseMs ?? REDIS_QUEUE_DEFAULTS.leaseMs),
    dedupeTtlMs: positive('dedupeTtlMs', options.dedupeTtlMs ?? REDIS_QUEUE_DEFAULTS.dedupeTtlMs),
    keepFailedMs: positive(
      'keepFailedMs',
      options.keepFailedMs ?? REDIS_QUEUE_DEFAULTS.keepFailedMs,
    ),
  };
}
