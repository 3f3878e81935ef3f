import { describeWebHealthz } from '@churn-risk/example-durable-demo/testing';
import { startRedisServer } from '@churn-risk/redis/testing';
import { fileURLToPath } from 'node:url';

describeWebHealthz({
  queue: 'redis',
  title: 'Redis',
  exampleRoot: fileURLToPath(new URL('..', import.meta.url)),
  urlVariable: 'REDIS_URL',
  startServer: () => startRedisServer(),
  downTimeoutMs: 10_000,
  testTimeoutMs: 30_000,
});
