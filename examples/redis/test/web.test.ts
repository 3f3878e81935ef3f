import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../src/demo/child-process.js';
import { waitFor } from '../src/demo/wait-for.js';

describe('the web process (src/web.ts, spawned)', () => {
  let redis: RedisServer | undefined;
  let web: Child | undefined;

  afterEach(async () => {
    await web?.stop('SIGKILL');
    await redis?.stop();
    redis?.cleanup();
  });

  it('answers /healthz 200 while Redis answers, 503 once it is stopped, and exits 0 on SIGTERM', async () => {
    redis = await startRedisServer();
    web = startChild('web', 'web.ts', {
      REDIS_URL: redis.url,
      CHURN_RISK_WEBHOOK_SECRET: 'whsec_example_redis_web',
      PORT: '0',
    });
    const url = (await web.waitForLine(/^listening on /)).slice('listening on '.length);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const up = await fetch(`${url}/healthz`);
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({ status: 'ok', queue: 'redis' });

    await redis.stop();
    const down = await waitFor(
      async () => {
        const response = await fetch(`${url}/healthz`);
        return response.status === 200 ? undefined : response;
      },
      { timeoutMs: 10_000, what: '/healthz to report Redis down' },
    );
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: 'unavailable', queue: 'redis' });

    expect(await web.stop('SIGTERM')).toBe(0);
  }, 30_000);
});
