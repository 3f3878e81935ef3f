import { createReceiver, type Receiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTs, type NodeProcess } from '../support/node-process.js';
import {
  SECRET,
  WORKER_SCRIPT,
  deliveryOf,
  eventually,
  freshAlert,
  readLog,
  tempLog,
} from './fixtures.js';

describe('a worker process killed with SIGKILL mid-handler', () => {
  let redis: RedisServer;
  const children: NodeProcess[] = [];
  const log = tempLog('crash');
  let web: Receiver;

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const child of children) child.kill();
    await web.close({ timeoutMs: 5000 }).catch(() => undefined);
    await redis.stop();
    redis.cleanup();
    log.remove();
  });

  it('loses nothing: another worker runs the alert once the lock expires', async () => {
    const env = {
      REDIS_URL: redis.url,
      PREFIX: 'crash',
      SECRET,
      LOG_FILE: log.file,
      LEASE_MS: '1500',
      CONCURRENCY: '1',
    };
    const first = spawnTs(WORKER_SCRIPT, { ...env, WORK_MS: '60000' });
    children.push(first);
    await first.waitForLines(/^worker ready/);

    web = createReceiver({
      secret: SECRET,
      queue: createRedisQueue({ connection: redis.url, prefix: 'crash' }),
      consume: false,
    });
    const { alert, id } = freshAlert('crash');
    expect((await web.handle(deliveryOf(alert))).status).toBe(202);

    await eventually(
      () => readLog(log.file).some(([kind, alertId]) => kind === 'start' && alertId === id),
      15_000,
      'the first worker to start the handler',
    );
    first.kill('SIGKILL');
    await first.exited;

    const second = spawnTs(WORKER_SCRIPT, { ...env, WORK_MS: '0' });
    children.push(second);
    await eventually(
      () => readLog(log.file).some(([kind, alertId]) => kind === 'done' && alertId === id),
      20_000,
      'the second worker to finish the alert',
    );
    const lines = readLog(log.file).filter(([, alertId]) => alertId === id);
    expect(lines).toEqual([
      ['start', id, String(first.pid)],
      ['start', id, String(second.pid)],
      ['done', id, String(second.pid)],
    ]);
    second.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
