import { Redis, type RedisOptions } from 'ioredis';

/** A Redis connection: a `redis://` (or `rediss://`) URL, ioredis options, or an ioredis instance. */
export type RedisConnection = string | RedisOptions | Redis;

/** Connections made from the user's setting; `owned` ones are ours to close. */
export interface Connections {
  /** For commands that must fail at once while Redis is unreachable (accepting alerts). */
  client: Redis;
  /** Makes a connection for a BullMQ worker (blocking commands, never fails a command early). */
  workerClient(): Redis;
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

/**
 * Resolves the `connection` option. The accepting client has the offline queue off: while Redis is
 * unreachable a command fails at once instead of waiting, so the receiver can answer 503.
 */
export function openConnections(connection: RedisConnection): Connections {
  const owned: Redis[] = [];
  const report = errorReporter();
  const make = (options: RedisOptions): Redis => {
    const client =
      typeof connection === 'string'
        ? new Redis(connection, options)
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
      'connection must be a redis:// URL, ioredis options or an ioredis instance.',
    );
  }
  if (typeof connection === 'string' && !/^rediss?:\/\//.test(connection)) {
    throw new TypeError('connection must be a redis:// or rediss:// URL.');
  }
  const client = isRedisInstance(connection)
    ? connection
    : // Auto-pipelining (one write for the alerts of one event-loop turn) was measured and left
      // off: less CPU per delivery, but fewer deliveries per second and a slower answer at 32
      // connections (bench/README "Redis mode").
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
export function whenReady(client: Redis, timeoutMs: number): Promise<void> {
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
