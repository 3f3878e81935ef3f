import { Cluster, Redis, type RedisOptions } from 'ioredis';

/**
 * A Redis connection: a `redis://` (or `rediss://`) URL, ioredis options, an ioredis instance, or
 * an ioredis `Cluster` (then the prefix needs a hash tag, `{churn-risk}`).
 */
export type RedisConnection = string | RedisOptions | Redis | Cluster;

/** A connection to one Redis or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** Connections made from the user's setting; `owned` ones are ours to close. */
export interface Connections {
  /** For commands that must fail at once while Redis is unreachable (accepting alerts). */
  client: RedisClient;
  /** Makes a connection for a BullMQ worker (blocking commands, never fails a command early). */
  workerClient(): RedisClient;
  /** Closes every connection made here; a connection the user passed is left open. */
  close(): Promise<void>;
}

/** Logs a connection error once, then at most every 30 s while it lasts (never the URL). */
function errorReporter(): (error: Error) => void {
  let lastAt = 0;
  return (error) => {
    const now = Date.now();
    if (now - lastAt < 30_000) return;
    lastAt = now;
    console.error(`[churn-risk] Redis connection error: ${error.message}`);
  };
}

function isRedisInstance(value: unknown): value is Redis {
  return value instanceof Redis;
}

/** True for an ioredis `Cluster` (also one from another copy of ioredis). */
export function isCluster(value: unknown): value is Cluster {
  return (
    value instanceof Cluster ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { isCluster?: unknown }).isCluster === true &&
      typeof (value as { duplicate?: unknown }).duplicate === 'function')
  );
}

/**
 * A second connection to the user's cluster, for a worker: a new `Cluster` with the same nodes and
 * options (BullMQ's blocking commands need `maxRetriesPerRequest: null`). Giving BullMQ the
 * cluster's options instead of the cluster would connect to 127.0.0.1:6379.
 */
function duplicateCluster(cluster: Cluster): Cluster {
  return cluster.duplicate(undefined, {
    redisOptions: { ...cluster.options.redisOptions, maxRetriesPerRequest: null },
  });
}

/**
 * Resolves the `connection` option. The accepting client has the offline queue off: while Redis is
 * unreachable a command fails at once instead of waiting, so the receiver can answer 503.
 */
export function openConnections(connection: RedisConnection): Connections {
  const owned: RedisClient[] = [];
  const report = errorReporter();
  const make = (options: RedisOptions): RedisClient => {
    const client =
      typeof connection === 'string'
        ? new Redis(connection, options)
        : isCluster(connection)
          ? duplicateCluster(connection)
          : isRedisInstance(connection)
            ? connection.duplicate(options)
            : new Redis({ ...connection, ...options });
    client.on('error', report);
    owned.push(client);
    return client;
  };
  if (
    typeof connection !== 'string' &&
    !isRedisInstance(connection) &&
    (typeof connection !== 'object' || (connection as unknown) === null)
  ) {
    throw new TypeError(
      'connection must be a redis:// URL, ioredis options, an ioredis instance or a Cluster.',
    );
  }
  if (typeof connection === 'string' && !/^rediss?:\/\//.test(connection)) {
    throw new TypeError('connection must be a redis:// or rediss:// URL.');
  }
  const client: RedisClient =
    isRedisInstance(connection) || isCluster(connection)
      ? connection
      : // Auto-pipelining (one write for the alerts of one event-loop turn) was measured and left
        // off: less CPU per delivery, but fewer deliveries per second and a slower answer at 32
        // connections (`pnpm bench redis`, 2026-11-23; the
        // measurement is in the history of bench/README.md).
        make({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  return {
    client,
    workerClient: () => make({ maxRetriesPerRequest: null, enableOfflineQueue: true }),
    async close() {
      await Promise.all(
        owned.splice(0).map(async (redis) => {
          try {
            await redis.quit();
          } catch {
            redis.disconnect(); // unreachable: drop the socket and its reconnection timer
          }
        }),
      );
    },
  };
}

/**
 * Resolves once `client` is connected; rejects after `timeoutMs` (the accepting client's commands
 * would fail at once before then, as its offline queue is off).
 */
export function whenReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(() => {
      client.off('ready', done);
      reject(new Error(`Redis was not reachable within ${timeoutMs} ms.`));
    }, timeoutMs);
    client.on('ready', done);
  });
}
