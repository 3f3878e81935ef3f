import { createReceiver, type Receiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { setTimeout as sleep } from 'node:timers/promises';
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

// A worker frozen (SIGSTOP) past its lease while its handler waits on its own short timer: after
// the thaw that timer runs before the renewal timer that would find the lease lost, so only a
// `context.signal` that compares the clock with the lease's end keeps the side effect from
// happening a second time after another worker took the alert over.
describe('a worker frozen past its lease, then thawed', () => {
  let redis: RedisServer;
  const children: NodeProcess[] = [];
  const log = tempLog('freeze');
  let web: Receiver | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const child of children) {
      if (child.child.signalCode === null && child.child.exitCode === null) {
        child.kill('SIGCONT');
      }
      child.kill();
    }
    await web?.close({ timeoutMs: 5000 }).catch(() => undefined);
    await redis.stop();
    redis.cleanup();
    log.remove();
  });

  it('reads context.signal aborted on its first read after the thaw, and does no side effect', async () => {
    const env = {
      REDIS_URL: redis.url,
      PREFIX: 'freeze',
      SECRET,
      LOG_FILE: log.file,
      LEASE_MS: '4000', // renewed every 2 s: after the thaw, the handler's 1.5 s timer runs first
      CONCURRENCY: '1',
      CHECK_SIGNAL: '1',
    };
    const first = spawnTs(WORKER_SCRIPT, { ...env, WORK_MS: '1500' });
    children.push(first);
    await first.waitForLines(/^worker ready/);

    web = createReceiver({
      secret: SECRET,
      queue: createRedisQueue({ connection: redis.url, prefix: 'freeze' }),
      consume: false,
    });
    const { alert, id } = freshAlert('freeze');
    expect((await web.handle(deliveryOf(alert))).status).toBe(202);
    await eventually(
      () => readLog(log.file).some(([kind, alertId]) => kind === 'start' && alertId === id),
      15_000,
      'the first worker to start the handler',
    );
    first.kill('SIGSTOP');

    const second = spawnTs(WORKER_SCRIPT, { ...env, WORK_MS: '0' });
    children.push(second);
    await eventually(
      () =>
        readLog(log.file).some(
          ([kind, alertId, pid]) => kind === 'done' && alertId === id && pid === String(second.pid),
        ),
      30_000,
      'the second worker to take the alert over and finish it',
    );

    first.kill('SIGCONT');
    await eventually(
      () =>
        readLog(log.file).some(([kind, , pid]) => kind !== 'start' && pid === String(first.pid)),
      15_000,
      'the thawed worker to end its run',
    );
    await sleep(500); // anything it would still write
    expect(readLog(log.file).filter(([, alertId]) => alertId === id)).toEqual([
      ['start', id, String(first.pid)],
      ['start', id, String(second.pid)],
      ['done', id, String(second.pid)],
      ['aborted', id, String(first.pid)],
    ]);
    for (const child of [first, second]) child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(await second.exited).toBe(0);
  });
});
