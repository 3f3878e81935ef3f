import { storeContract } from '@churn-risk/core/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { freePort, startRedisServer, type RedisServer } from '../src/testing.js';

// The store contract against @churn-risk/redis on a real redis-server: each case gets a
// prefix of its own, and its two store instances share it (two processes on one Redis).
let redis: RedisServer;
let nobody: number;
beforeAll(async () => {
  redis = await startRedisServer();
  nobody = await freePort(); // nothing listens there
});
afterAll(async () => {
  await redis.stop();
  redis.cleanup();
});

const LEASE_MS = 300;

storeContract(
  { describe, it },
  {
    name: 'redis',
    leaseMs: LEASE_MS,
    create: (scope) =>
      createRedisStore({
        connection: redis.url,
        prefix: `contract-${scope}`,
        leaseMs: LEASE_MS,
      }),
    unreachable: () => createRedisStore({ connection: `redis://127.0.0.1:${String(nobody)}` }),
  },
);
