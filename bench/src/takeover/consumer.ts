/**
 * Child process entry of `pnpm bench takeover`: `consumer.ts <redis|postgres> <url> <namespace>
 * <leaseMs> <reclaimIntervalMs>`, one consuming process (`createReceiver` with
 * `createRedisQueue` / `createPostgresQueue`, the given `leaseMs` and `reclaimIntervalMs`,
 * concurrency 10). Its handler tells the parent `{ start: { userId, at, pid } }` first thing
 * (`at`: `machineClock()`, the machine's monotonic clock), then holds until the
 * parent sends `{ release: userId }` (the parent SIGKILLs the process instead when it is the
 * victim). `{ accept: true }` makes this process accept one fresh signed alert through its
 * receiver (answered `{ accepted: userId }`).
 */
import { createReceiver } from '@churn-risk/core';
import { type AlertQueue } from '@churn-risk/core/store';
import { SECRET, alertBody, signHeaders } from '../lib/alert.js';
import { tellParent } from '../lib/child.js';
import { machineClock } from '../lib/clock.js';

const [engine = '', url = '', namespace = '', lease = '', reclaim = ''] = process.argv.slice(2);
const leaseMs = Number(lease);
const reclaimIntervalMs = Number(reclaim);

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/**
 * The queue with today's option names (`leaseMs`, `reclaimIntervalMs`). The old names
 * (`lockDurationMs`, `stalledIntervalMs`) are refused with a `TypeError` once the rename is in;
 * a package that still takes them would ignore `leaseMs` and run with its 30 s default, which
 * this benchmark reports instead of timing.
 */
async function makeQueue(): Promise<AlertQueue & { close(): Promise<void> }> {
  if (engine === 'redis') {
    const { createRedisQueue } = await import('@churn-risk/redis');
    const old = 'lockDurationMs';
    try {
      const probe = createRedisQueue({ connection: url, prefix: namespace, [old]: 1 } as never);
      await probe.close();
      throw new Error(
        `@churn-risk/redis in this tree still takes ${old}: the takeover benchmark needs leaseMs and reclaimIntervalMs`,
      );
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
    const options = { connection: url, prefix: namespace, leaseMs, reclaimIntervalMs };
    return createRedisQueue(options);
  }
  if (engine === 'postgres') {
    const { createPostgresQueue } = await import('@churn-risk/postgres');
    const old = 'lockDurationMs';
    try {
      const probe = createPostgresQueue({ connection: url, schema: namespace, [old]: 1 } as never);
      await probe.close();
      throw new Error(
        `@churn-risk/postgres in this tree still takes ${old}: the takeover benchmark needs leaseMs and reclaimIntervalMs`,
      );
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
    const options = { connection: url, schema: namespace, leaseMs, reclaimIntervalMs };
    return createPostgresQueue(options);
  }
  throw new Error(`unknown engine "${engine}"`);
}

const releases = new Map<string, () => void>();

try {
  const queue = await makeQueue();
  const receiver = createReceiver({ secret: SECRET, queue, concurrency: 10 });
  receiver.on('churn_risk_alert', async (alert) => {
    tellParent({
      start: {
        userId: alert.userId,
        at: machineClock(),
        pid: process.pid,
      },
    });
    await new Promise<void>((resolve) => releases.set(alert.userId, resolve));
  });
  process.on('message', (message: { release?: string; accept?: true }) => {
    if (message.release !== undefined) {
      releases.get(message.release)?.();
      releases.delete(message.release);
    } else if (message.accept === true) {
      const body = alertBody();
      receiver
        .handle({
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signHeaders(body) },
          body,
        })
        .then(
          (result) => {
            if (result.status !== 202) throw new Error(`answered ${String(result.status)}`);
            tellParent({ accepted: (JSON.parse(body) as { userId: string }).userId });
          },
          (error: unknown) => {
            tellParent({ error: `accept: ${describe(error)}` });
          },
        )
        .catch((error: unknown) => {
          tellParent({ error: `accept: ${describe(error)}` });
        });
    }
  });
  process.on('disconnect', () => process.exit(0));
  tellParent({ ready: true });
} catch (error) {
  tellParent({ error: `${engine} consumer: ${describe(error)}` });
  setTimeout(() => process.exit(1), 100);
}
