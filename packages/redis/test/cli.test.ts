import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe } from 'vitest';
import { failedCliCases } from '../../core/src/node/failed-cli-cases.test-util.js';
import { runFailedCli } from '../src/cli/failed-cli.js';
import { createRedisQueue } from '../src/index.js';
import { startRedisServer, type RedisServer } from '../src/testing.js';

// The failed-set CLI's shared cases (core's failed-cli-cases), on a real redis-server.
describe('churn-risk-redis', () => {
  let redis: RedisServer | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
    redis?.cleanup();
  });

  failedCliCases({
    bin: 'churn-risk-redis',
    binPath: fileURLToPath(new URL('../src/cli/bin.ts', import.meta.url)),
    run: runFailedCli,
    store: 'Redis',
    urlFlag: 'redis',
    urlEnv: 'REDIS_URL',
    scopeFlag: 'prefix',
    misspeltScopeFlag: 'prefx',
    url: () => redis!.url,
    queue: (url, prefix) => createRedisQueue({ connection: url, prefix }),
    urlWithPassword: (port, password) => `redis://:${password}@127.0.0.1:${String(port)}`,
    shownAs: (port) => `redis://:***@127.0.0.1:${String(port)}`,
  });
});
