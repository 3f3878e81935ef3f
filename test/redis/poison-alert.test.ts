import { createReceiver, type Receiver } from '@churn-risk/core';
import { createRedisQueue, type RedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTs, type NodeProcess } from '../support/node-process.js';
import {
  SECRET,
  WORKER_SCRIPT,
  deliveryOf,
  eventually,
  freshAlert,
  readLog,
  logLines,
  tempLog,
} from './fixtures.js';

/** onError lines a worker wrote: `[alertId, pid, message]`. */
function errorLines(file: string): [string, string, string][] {
  return logLines(file).map((line) => {
    const [id = '', pid = '', ...message] = line.split(' ');
    return [id, pid, message.join(' ')];
  });
}

/**
 * Poison alerts: an alert whose worker dies mid-alert more than `maxStalls` times (here 1, so that two
 * SIGKILLs make it poison) goes to the failed set with an error that says it stalled, `onError`
 * is called once, and other alerts keep flowing; `retry(id)` gives it `maxStalls` afresh.
 */
describe('a poison alert (its worker is SIGKILLed every time it runs)', () => {
  let redis: RedisServer;
  let web: Receiver | undefined;
  let queue: RedisQueue | undefined;
  const children: NodeProcess[] = [];
  const log = tempLog('poison');
  const errors = join(log.dir, 'errors.log');

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map((child) => child.exited));
    await web?.close({ timeoutMs: 5000 }).catch(() => undefined);
    await queue?.close().catch(() => undefined);
    await redis.stop();
    redis.cleanup();
    log.remove();
  });

  it('goes to the failed set after maxStalls + 1 deaths, onError once, and others still run', async () => {
    const env = {
      REDIS_URL: redis.url,
      PREFIX: 'poison',
      SECRET,
      LOG_FILE: log.file,
      ERROR_FILE: errors,
      LEASE_MS: '1000',
      RECLAIM_MS: '500',
      MAX_STALLS: '1',
      CONCURRENCY: '1',
      WORK_MS: '0',
      HOLD_MS: '600000', // a `hold_` alert never finishes: a stand-in for an OOM on its payload
    };
    const spawnWorker = (): NodeProcess => {
      const child = spawnTs(WORKER_SCRIPT, env);
      children.push(child);
      return child;
    };
    queue = createRedisQueue({ connection: redis.url, prefix: 'poison' });
    web = createReceiver({ secret: SECRET, queue, consume: false });
    const poison = freshAlert('hold');
    expect((await web.handle(deliveryOf(poison.alert))).status).toBe(202);
    const starts = (): string[] =>
      readLog(log.file)
        .filter(([kind, id]) => kind === 'start' && id === poison.id)
        .map(([, , pid]) => pid);

    for (let death = 1; death <= 2; death++) {
      const worker = spawnWorker();
      await eventually(() => starts().length === death, 30_000, `take ${death} of the alert`);
      worker.kill('SIGKILL');
      await worker.exited;
    }

    const survivor = spawnWorker();
    await survivor.waitForLines(/^worker ready/);
    await eventually(() => errorLines(errors).length > 0, 30_000, 'onError for the poison alert');
    const failed = await queue.failed();
    expect(failed).toHaveLength(1);
    expect(failed[0]?.id).toBe(poison.id);
    expect(failed[0]?.error).toMatch(/Failed as poison \(stalls: 2,/);
    expect(starts()).toHaveLength(2); // not run a third time

    const healthy = freshAlert('healthy');
    expect((await web.handle(deliveryOf(healthy.alert))).status).toBe(202);
    await eventually(
      () => readLog(log.file).some(([kind, id]) => kind === 'done' && id === healthy.id),
      30_000,
      'the next alert to be handled',
    );
    const reported = errorLines(errors);
    expect(reported).toHaveLength(1);
    expect(reported[0]?.[0]).toBe(poison.id);
    expect(reported[0]?.[1]).toBe(String(survivor.pid));
    expect(reported[0]?.[2]).toMatch(/poison/);

    // retry(id) counts the stalls afresh: the retried alert runs again, and one more death of its
    // worker (1, within maxStalls) sends it to another worker instead of back to the failed set.
    await queue.retry(poison.id);
    await eventually(() => starts().length === 3, 30_000, 'the retried alert to run again');
    expect(starts()[2]).toBe(String(survivor.pid));
    survivor.kill('SIGKILL');
    await survivor.exited;
    const next = spawnWorker();
    await eventually(
      () => starts().length === 4,
      30_000,
      'a new worker to take it after one stall',
    );
    expect(starts()[3]).toBe(String(next.pid));
    expect(await queue.failed()).toHaveLength(0);
    expect(errorLines(errors)).toHaveLength(1); // no second onError
    next.kill('SIGTERM');
    expect(await next.exited).toBe(0);
  }, 240_000);
});
