/**
 * Child process entry of `pnpm bench invocation`: `child.ts <role> <engine> <url> <namespace>`,
 * on the machine's Node, `@churn-risk/*` from the built `dist/`. Speaks to the parent over IPC.
 *
 * - `web`: `createReceiver({ secret, queue, consume: false })`, a web process of worker mode.
 * - `invocation`: `createReceiver({ secret, queue, consume: 'invocation', keepAliveBudgetMs:
 *   10_000 })`; every delivery passes a `waitUntil` that keeps its promise (as `after()` or
 *   Vercel's `waitUntil` would), and the handler runs in this process.
 * - `worker`: `createReceiver({ secret, queue })` (`consume: true`), the worker process of worker
 *   mode; it receives no delivery.
 *
 * Each answers `{ ready }` once its store answers. `web` and `invocation`: `{ steady: { count,
 * intervalMs } }` hands `count` fresh signed deliveries to `receiver.handle`, one every
 * `intervalMs` (not waiting for the previous one), and answers `{ sent: { answered, failed } }`
 * (`answered`: `[userId, calledAt, answeredAt]` of each delivery: `handle` called, `202` back; in
 * send order) once every answer came. `invocation`
 * and `worker`: `{ go: { expect } }`, then `{ done: { starts, settledMs } }` once `expect`
 * handlers started (`starts`: `[userId, at]`; `settledMs`: for `invocation`, how long after the
 * last start the last kept promise settled); `{ report: true }` answers `{ progress: { starts,
 * kept } }` at any time. The handler is a no-op that reads the clock first.
 */
import type { AlertQueue } from '@churn-risk/core/store';
import { createReceiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { createRedisQueue } from '@churn-risk/redis';
import { alertBody, SECRET, signHeaders } from '../lib/alert.js';
import { tellParent } from '../lib/child.js';
import { machineClock } from '../lib/clock.js';

const [role = '', engine = '', url = '', namespace = ''] = process.argv.slice(2);

/** Vercel's and `after()`'s budget in the issue's example: 10 s after the answer. */
export const KEEP_ALIVE_BUDGET_MS = 10_000;

type Command =
  { steady: { count: number; intervalMs: number } } | { go: { expect: number } } | { report: true };

const describe = (error: unknown): string =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);

function makeQueue(): AlertQueue & { health?: () => Promise<{ reachable: boolean }> } {
  if (engine === 'redis') return createRedisQueue({ connection: url, prefix: namespace });
  if (engine === 'postgres') return createPostgresQueue({ connection: url, schema: namespace });
  throw new Error(`unknown engine "${engine}"`);
}

async function main(): Promise<void> {
  const queue = makeQueue();
  const health = await queue.health?.();
  if (health !== undefined && !health.reachable)
    throw new Error(`the ${engine} store does not answer`);
  const consume = role === 'web' ? false : role === 'invocation' ? 'invocation' : true;
  if (role !== 'web' && role !== 'invocation' && role !== 'worker') {
    throw new Error(`unknown role "${role}"`);
  }
  const receiver = createReceiver({
    secret: SECRET,
    queue,
    consume,
    ...(consume === 'invocation' ? { keepAliveBudgetMs: KEEP_ALIVE_BUDGET_MS } : {}),
  });

  const kept = new Set<Promise<unknown>>();
  const waitUntil = (promise: Promise<unknown>): void => {
    kept.add(promise);
    void promise.finally(() => kept.delete(promise));
  };

  const starts: [string, number][] = [];
  let expect = Number.POSITIVE_INFINITY;
  let reported = false;
  const report = async (): Promise<void> => {
    reported = true;
    const lastStart = starts.at(-1)?.[1] ?? machineClock();
    while (kept.size > 0) await Promise.allSettled([...kept]);
    tellParent({ done: { starts, settledMs: machineClock() - lastStart } });
  };
  receiver.on('churn_risk_alert', (alert) => {
    const at = machineClock();
    starts.push([alert.userId, at]);
    if (!reported && starts.length >= expect) void report();
  });

  process.on('message', (command: Command) => {
    if ('report' in command) {
      tellParent({ progress: { starts, kept: kept.size } });
      return;
    }
    if ('go' in command) {
      expect = command.go.expect;
      if (!reported && starts.length >= expect) void report();
      return;
    }
    const { count, intervalMs } = command.steady;
    const answered: [string, number, number][] = new Array(count);
    let failed = 0;
    const sends: Promise<void>[] = [];
    const origin = machineClock();
    const send = async (i: number): Promise<void> => {
      const body = alertBody();
      const userId = (JSON.parse(body) as { userId: string }).userId;
      const calledAt = machineClock();
      const result = await receiver.handle({
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signHeaders(body) },
        body,
        ...(consume === 'invocation' ? { waitUntil } : {}),
      });
      const at = machineClock();
      if (result.status !== 202) {
        failed++;
        if (failed === 1) console.error(`invocation ${role}: answered ${String(result.status)}`);
      }
      answered[i] = [userId, calledAt, at];
    };
    const tick = (i: number): void => {
      sends.push(
        send(i).catch((error: unknown) => {
          failed++;
          if (failed === 1) console.error(`invocation ${role}: ${describe(error)}`);
        }),
      );
      if (i + 1 < count) {
        setTimeout(() => tick(i + 1), Math.max(0, origin + (i + 1) * intervalMs - machineClock()));
      } else {
        void Promise.all(sends).then(() => {
          tellParent({ sent: { answered: answered.filter(Boolean), failed } });
        });
      }
    };
    tick(0);
  });
  tellParent({ ready: true });
}

process.on('disconnect', () => process.exit(0));
try {
  await main();
} catch (error) {
  tellParent({ error: `${engine} ${role}: ${describe(error)}` });
  setTimeout(() => process.exit(1), 100);
}
