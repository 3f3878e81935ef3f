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

// A worker process that stops mid-handler: killed (SIGKILL), or frozen (SIGSTOP) past its lease
// and thawed. Either way another worker takes the alert over once the lease has expired; a thawed
// worker's handler reads `context.signal` aborted and does not do its side effect a second time.
describe('a worker process that stops mid-handler', () => {
  let redis: RedisServer;
  const children: NodeProcess[] = [];
  const log = tempLog('crash');
  const webs: Receiver[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const child of children) {
      child.kill('SIGCONT'); // a stopped process cannot handle the SIGKILL otherwise
      child.kill();
    }
    await Promise.all(webs.map((web) => web.close({ timeoutMs: 5000 }).catch(() => undefined)));
    await redis.stop();
    redis.cleanup();
    log.remove();
  });

  /** The worker environment of `prefix`, plus `extra`. */
  function workerEnv(prefix: string, extra: Record<string, string>): Record<string, string> {
    return { REDIS_URL: redis.url, PREFIX: prefix, SECRET, LOG_FILE: log.file, ...extra };
  }

  function spawnWorker(env: Record<string, string>): NodeProcess {
    const child = spawnTs(WORKER_SCRIPT, env);
    children.push(child);
    return child;
  }

  /** A worker (`env`) that has started the handler of a fresh alert; and the alert's identity. */
  async function runningWorker(env: Record<string, string>): Promise<[NodeProcess, string]> {
    const prefix = env.PREFIX ?? '';
    const worker = spawnWorker(env);
    await worker.waitForLines(/^worker ready/);
    const web = createReceiver({
      secret: SECRET,
      queue: createRedisQueue({ connection: redis.url, prefix }),
      consume: false,
    });
    webs.push(web);
    const { alert, id } = freshAlert(prefix);
    expect((await web.handle(deliveryOf(alert))).status).toBe(202);
    await eventually(
      () => readLog(log.file).some(([kind, alertId]) => kind === 'start' && alertId === id),
      15_000,
      'the first worker to start the handler',
    );
    return [worker, id];
  }

  /** Whether `worker` wrote a `kind` line for alert `id`. */
  const wrote = (kind: string, id: string, worker: NodeProcess): boolean =>
    readLog(log.file).some(
      ([k, alertId, pid]) => k === kind && alertId === id && pid === String(worker.pid),
    );

  it('SIGKILL loses nothing: another worker runs the alert once the lock expires', async () => {
    const env = workerEnv('crash', { LEASE_MS: '1500', CONCURRENCY: '1' });
    const [first, id] = await runningWorker({ ...env, WORK_MS: '60000' });
    first.kill('SIGKILL');
    await first.exited;

    const second = spawnWorker({ ...env, WORK_MS: '0' });
    await eventually(() => wrote('done', id, second), 20_000, 'the second worker to finish');
    expect(readLog(log.file).filter(([, alertId]) => alertId === id)).toEqual([
      ['start', id, String(first.pid)],
      ['start', id, String(second.pid)],
      ['done', id, String(second.pid)],
    ]);
    second.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('SIGSTOP past the lease: taken over, and the thawed handler reads context.signal aborted', async () => {
    // Renewed every 2 s: after the thaw, the handler's own 1.5 s timer runs before the renewal
    // timer that would find the lease lost, so only a signal that reads the clock sees it.
    const env = workerEnv('freeze', { LEASE_MS: '4000', CONCURRENCY: '1', CHECK_SIGNAL: '1' });
    const [first, id] = await runningWorker({ ...env, WORK_MS: '1500' });
    first.kill('SIGSTOP');

    const second = spawnWorker({ ...env, WORK_MS: '0' });
    await eventually(() => wrote('done', id, second), 30_000, 'the second worker to finish');
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
