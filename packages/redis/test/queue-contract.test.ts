import { queueContract } from '@churn-risk/core/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createRedisQueue } from '../src/index.js';
import { startRedisServer, type RedisServer } from '../src/testing.js';

// The back-end contract of SPEC 13 against @churn-risk/redis on a real redis-server: each case
// gets a prefix of its own (queues of one case share it, as processes sharing a Redis do).
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.stop();
  redis.cleanup();
});

queueContract(
  { describe, it },
  {
    name: 'redis',
    create: (scope) =>
      createRedisQueue({
        connection: redis.url,
        prefix: `contract-${scope}`,
        lockDurationMs: 5000,
      }),
  },
);
