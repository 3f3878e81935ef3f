/**
 * Child process entry of `pnpm bench drain`: `child.ts <producer|consumer> <side> <url>
 * <namespace>`, on Node 22 for every side (graphile-worker and pg-boss need it; the same Node for
 * all). Speaks to the parent over IPC:
 *
 * - producer: `{ store: n }` enqueues n fresh alerts (16 enqueues in flight) and answers
 *   `{ stored: { count, ms } }`; `{ steady: { count, intervalMs } }` calls the enqueue on a fixed
 *   schedule (one every `intervalMs`, not waiting for the previous one) and answers
 *   `{ sent: { count, failed } }` once
 *   every enqueue settled.
 * - consumer: connects and answers `{ ready }`; `{ go: { expect } }` starts taking alerts, says
 *   `{ first }` at the first handler start, and once `expect` handlers started answers
 *   `{ done: { first, last, count, cpuMicros, starts } }` (`starts`: `[sentAt, startAt]` of each
 *   alert), then closes gracefully and answers `{ closed }`.
 */
import { tellParent } from '../lib/child.js';
import { stampedAlert, type Side, type StampedAlert } from './side.js';
import { machineClock } from '../lib/clock.js';

const [role = '', sideName = '', url = '', namespace = ''] = process.argv.slice(2);

const SIDES: Record<string, () => Promise<{ side: Side }>> = {
  'ours-redis': () => import('./side-ours-redis.js'),
  bullmq: () => import('./side-bullmq.js'),
  'ours-postgres': () => import('./side-ours-postgres.js'),
  'graphile-worker': () => import('./side-graphile-worker.js'),
  'pg-boss': () => import('./side-pg-boss.js'),
  'pg-boss-batch': async () => ({ side: (await import('./side-pg-boss.js')).batchSide }),
  'ours-redis-per-user': async () => ({
    side: (await import('./side-ours-redis.js')).perUserSide,
  }),
  'ours-redis-10-users': async () => ({
    side: (await import('./side-ours-redis.js')).tenUsersSide,
  }),
  'ours-postgres-per-user': async () => ({
    side: (await import('./side-ours-postgres.js')).perUserSide,
  }),
  'ours-postgres-10-users': async () => ({
    side: (await import('./side-ours-postgres.js')).tenUsersSide,
  }),
  'ours-redis-before': async () => ({ side: (await import('./side-ours-before.js')).redisSide }),
  'ours-postgres-before': async () => ({
    side: (await import('./side-ours-before.js')).postgresSide,
  }),
};

/** No handler start for this many checks this far apart: the consumer is stalled. */
const STALL_CHECKS = 6;
const STALL_CHECK_MS = 5_000;

type Command =
  | { store: number }
  | { purge: true }
  | { report: true }
  | { steady: { count: number; intervalMs: number } }
  | { go: { expect: number } };

const describe = (error: unknown): string =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);

async function loadSide(): Promise<Side> {
  const load = SIDES[sideName];
  if (load === undefined) throw new Error(`unknown side "${sideName}"`);
  return (await load()).side;
}

async function produce(side: Side): Promise<void> {
  const producer = await side.producer({ url, namespace });
  process.on('message', (command: Command) => {
    if ('store' in command) {
      const started = Date.now();
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < command.store) {
          next++;
          await producer.enqueue(stampedAlert());
        }
      };
      Promise.all(Array.from({ length: 16 }, lane)).then(
        () => {
          tellParent({ stored: { count: command.store, ms: Date.now() - started } });
        },
        (error: unknown) => {
          tellParent({ error: `store: ${describe(error)}` });
        },
      );
    } else if ('purge' in command) {
      if (producer.purge === undefined) {
        tellParent({ purged: false });
        return;
      }
      producer.purge().then(
        () => {
          tellParent({ purged: true });
        },
        (error: unknown) => {
          tellParent({ error: `purge: ${describe(error)}` });
        },
      );
    } else if ('steady' in command) {
      const { count, intervalMs } = command.steady;
      const origin = machineClock();
      let failed = 0;
      const sends: Promise<void>[] = [];
      const tick = (i: number): void => {
        sends.push(
          producer.enqueue(stampedAlert()).catch((error: unknown) => {
            failed++;
            if (failed === 1) console.error(`drain producer: ${describe(error)}`);
          }),
        );
        if (i + 1 < count) {
          setTimeout(
            () => {
              tick(i + 1);
            },
            Math.max(0, origin + (i + 1) * intervalMs - machineClock()),
          );
        } else {
          void Promise.all(sends).then(() => {
            tellParent({ sent: { count, failed } });
          });
        }
      };
      tick(0);
    }
  });
  tellParent({ ready: true });
}

async function consume(side: Side): Promise<void> {
  let expect = Number.POSITIVE_INFINITY;
  let count = 0;
  let first = 0;
  let cpuAtFirst: NodeJS.CpuUsage | undefined;
  const starts: [number, number][] = [];
  let finished = false;
  const onStart = (alert: StampedAlert): void => {
    const at = machineClock();
    if (finished) return;
    count++;
    starts.push([alert.sentAt, at]);
    if (count === 1) {
      first = at;
      cpuAtFirst = process.cpuUsage();
      tellParent({ first: at });
    }
    if (count >= expect) {
      finished = true;
      const cpu = process.cpuUsage(cpuAtFirst);
      tellParent({
        done: { first, last: at, count, cpuMicros: cpu.user + cpu.system, starts },
      });
      void consumer.close().then(
        () => {
          tellParent({ closed: true });
        },
        (error: unknown) => {
          tellParent({ closed: false, error: describe(error) });
        },
      );
    }
  };
  const consumer = await side.consumer({ url, namespace }, onStart);
  process.on('message', (command: Command) => {
    if ('report' in command) {
      const cpu = process.cpuUsage(cpuAtFirst);
      const last = starts.at(-1)?.[1] ?? first;
      tellParent({ progress: { first, last, count, cpuMicros: cpu.user + cpu.system, starts } });
      return;
    }
    if (!('go' in command)) return;
    expect = command.go.expect;
    // A side that stops starting handlers (its store refuses writes...) fails at once, not at the cap.
    let seen = 0;
    let still = 0;
    const watchdog = setInterval(() => {
      if (finished) {
        clearInterval(watchdog);
        return;
      }
      still = count === seen ? still + 1 : 0;
      seen = count;
      if (still >= STALL_CHECKS) {
        clearInterval(watchdog);
        tellParent({
          error: `stalled: ${String(count)} of ${String(expect)} handlers started, none in the last ${String((STALL_CHECKS * STALL_CHECK_MS) / 1000)} s`,
        });
      }
    }, STALL_CHECK_MS);
    consumer.start().catch((error: unknown) => {
      tellParent({ error: `start: ${describe(error)}` });
    });
  });
  tellParent({ ready: true });
}

process.on('disconnect', () => process.exit(0));
try {
  const side = await loadSide();
  if (role === 'producer') await produce(side);
  else if (role === 'consumer') await consume(side);
  else throw new Error(`unknown role "${role}"`);
} catch (error) {
  tellParent({ error: `${sideName} ${role}: ${describe(error)}` });
  // The parent reads the error first; the exit tells it that nothing more will come.
  setTimeout(() => process.exit(1), 100);
}
