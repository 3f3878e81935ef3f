import type { AlertStore } from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createPostgresStore } from '@churn-risk/postgres';
import { startPostgres } from '@churn-risk/postgres/testing';
import { createRedisStore } from '@churn-risk/redis';
import { startRedisServer } from '@churn-risk/redis/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunLog, type RunEntry, type RunLog } from '../lib/run-log.js';
import type { QueueKind } from '../lib/settings.js';
import {
  buildWorkspacePackages,
  runNext,
  startServer,
  succeeded,
  type Server,
} from './next-server.js';

// The example under `next build` + `next start` (Node 22) against a real
// PostgreSQL 15, and the same flow on a real redis-server: alerts handled in the invocation that
// accepted them, a frozen server's alert taken over by a sweep and completed once, retries run by
// sweeps once due, and the sweep route's bearer. No timed assertions: every wait is for a
// condition, with a generous deadline.

const SECRET = 'whsec_example_next_postgres';
const CRON_SECRET = 'cron_example_next_postgres_0123456789';
const LEASE_MS = 2_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value; throws naming `what` after `deadlineMs`. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  deadlineMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline)
      throw new Error(`still waiting for ${what} after ${String(deadlineMs)} ms`);
    await sleep(100);
  }
}

let sequence = 0;
function delivery(prefix: string): { id: string; headers: Record<string, string>; body: string } {
  sequence += 1;
  const userId = `${prefix}${String(process.pid)}_${String(sequence)}`;
  const triggeredAt = new Date().toISOString();
  return {
    id: `${userId}:${triggeredAt}`,
    ...createTestDelivery({ userId, triggeredAt }, { secret: SECRET }),
  };
}

async function post(
  server: Server,
  sent: { headers: Record<string, string>; body: string },
): Promise<number> {
  const response = await fetch(`${server.url}/api/webhooks/churn-risk`, {
    method: 'POST',
    headers: sent.headers,
    body: sent.body,
  });
  await response.arrayBuffer();
  return response.status;
}

interface SweepAnswer {
  status: number;
  body: string;
}

async function sweep(
  server: Server,
  authorization: string | null = `Bearer ${CRON_SECRET}`,
): Promise<SweepAnswer> {
  const response = await fetch(`${server.url}/api/churn-risk/sweep`, {
    headers: authorization === null ? {} : { authorization },
  });
  return { status: response.status, body: await response.text() };
}

const handlerRuns = (entries: RunEntry[]): RunEntry[] =>
  entries.filter((entry) => entry.kind === 'handler');
const onErrorCalls = (entries: RunEntry[]): RunEntry[] =>
  entries.filter((entry) => entry.kind === 'on-error');

interface Database {
  url: string;
  stop(): Promise<void>;
}

const databases: Record<QueueKind, () => Promise<Database>> = {
  postgres: async () => {
    const server = await startPostgres();
    return {
      url: server.url,
      stop: async () => {
        await server.stop();
        server.cleanup();
      },
    };
  },
  redis: async () => {
    const server = await startRedisServer();
    return {
      url: server.url,
      stop: async () => {
        await server.stop();
        server.cleanup();
      },
    };
  },
};

beforeAll(async () => {
  await buildWorkspacePackages();
  // No secret and no database at build time: the routes make their receiver on first request.
  await succeeded(runNext(['build']), 'next build');
}, 600_000);

describe.each(['postgres', 'redis'] as const)(
  'examples/next-postgres on %s (next start, Node 22)',
  (queue) => {
    let database: Database | undefined;
    let serverA: Server | undefined;
    let runs: RunLog | undefined;
    let store: AlertStore | undefined;
    const spare: Server[] = [];

    const env = (instance: string): Record<string, string> => ({
      CHURN_RISK_WEBHOOK_SECRET: SECRET,
      CHURN_RISK_QUEUE: queue,
      [queue === 'postgres' ? 'DATABASE_URL' : 'REDIS_URL']: database?.url ?? '',
      CHURN_RISK_LEASE_MS: String(LEASE_MS),
      CHURN_RISK_KEEP_ALIVE_BUDGET_MS: '20000',
      CHURN_RISK_SWEEP_BUDGET_MS: '20000',
      CHURN_RISK_EXAMPLE_INSTANCE: instance,
      CRON_SECRET,
    });
    const a = (): Server => {
      if (serverA === undefined) throw new Error('server a not started');
      return serverA;
    };
    const log = (): RunLog => {
      if (runs === undefined) throw new Error('no run log');
      return runs;
    };
    const alertStore = (): AlertStore => {
      if (store === undefined) throw new Error('no store');
      return store;
    };

    beforeAll(async () => {
      database = await databases[queue]();
      serverA = await startServer(env('a'));
      runs = createRunLog(queue, database.url);
      store =
        queue === 'postgres'
          ? createPostgresStore({ connection: database.url })
          : createRedisStore({ connection: database.url });
    }, 180_000);

    afterAll(async () => {
      for (const server of [serverA, ...spare]) await server?.kill();
      await runs?.close();
      await store?.close();
      await database?.stop();
    }, 60_000);

    it('the sweep route answers 401 without the bearer or with a wrong one, and never logs it', async () => {
      for (const authorization of [
        null,
        'Bearer wrong_secret_0123456789abcdef',
        `Basic ${CRON_SECRET}`,
      ]) {
        const answer = await sweep(a(), authorization);
        expect(answer.status, String(authorization)).toBe(401);
        expect(answer.body).not.toContain(CRON_SECRET);
      }
      expect((await sweep(a())).status).toBe(200);
      expect(a().run.output()).not.toContain(CRON_SECRET);
    });

    it('handles an alert inside the invocation that accepted it (no other process, no sweep)', async () => {
      const sent = delivery('quick_');
      expect(await post(a(), sent)).toBe(202);
      const done = await until('the run of the accepted alert', async () => {
        const found = handlerRuns(await log().list(sent.id));
        return found.some((run) => run.outcome !== 'running') ? found : undefined;
      });
      expect(done).toMatchObject([{ instance: 'a', attempt: 0, stalls: 0, outcome: 'done' }]);
      expect(await post(a(), sent)).toBe(202); // a redelivery: a duplicate, not run again
      await sleep(500);
      expect(handlerRuns(await log().list(sent.id))).toHaveLength(1);
    });

    it('finishes a handler that fails twice by sweeps, each retry once due, with onError never called', async () => {
      const sent = delivery('flaky_');
      expect(await post(a(), sent)).toBe(202);
      const entries = await until('the flaky alert done', async () => {
        const found = await log().list(sent.id);
        if (handlerRuns(found).some((run) => run.outcome === 'done')) return found;
        expect((await sweep(a())).status).toBe(200);
        return undefined;
      });
      const tries = handlerRuns(entries);
      expect(tries.map(({ attempt, outcome }) => ({ attempt, outcome }))).toEqual([
        { attempt: 0, outcome: 'failed' },
        { attempt: 1, outcome: 'failed' },
        { attempt: 2, outcome: 'done' },
      ]);
      // Each retry started once due: no earlier than its backoff (1 s, then 2 s) after the failure.
      for (const [index, delay] of [
        [1, 1_000],
        [2, 2_000],
      ] as const) {
        const failedAt = tries[index - 1]?.endedAt ?? Number.NaN;
        expect(tries[index]?.startedAt).toBeGreaterThanOrEqual(failedAt + delay);
      }
      expect(onErrorCalls(entries)).toEqual([]);
    });

    it('ends an alert whose handler always fails in the failed set, with onError once', async () => {
      const sent = delivery('broken_');
      expect(await post(a(), sent)).toBe(202);
      await until('onError for the broken alert', async () => {
        if (onErrorCalls(await log().list(sent.id)).length > 0) return true;
        expect((await sweep(a())).status).toBe(200);
        return undefined;
      });
      // More sweeps: nothing runs it again and onError is not called twice.
      for (let i = 0; i < 3; i++) expect((await sweep(a())).status).toBe(200);
      const entries = await log().list(sent.id);
      expect(handlerRuns(entries).map(({ attempt, outcome }) => ({ attempt, outcome }))).toEqual(
        [0, 1, 2, 3].map((attempt) => ({ attempt, outcome: 'failed' })),
      );
      expect(onErrorCalls(entries)).toHaveLength(1);
      const failed = (await alertStore().failed({ limit: 100 })).filter(
        (alert) => alert.id === sent.id,
      );
      expect(failed).toHaveLength(1);
    });

    it('a server frozen (SIGSTOP) mid-handler: a second server sweeps and completes the alert once; the first is fenced', async () => {
      const completedBefore = (await alertStore().counts()).completed;
      const sent = delivery('slow_');
      expect(await post(a(), sent)).toBe(202);
      await until('the slow run started on a', async () => {
        const found = handlerRuns(await log().list(sent.id));
        return found.some((run) => run.instance === 'a') ? true : undefined;
      });
      await sleep(1_000); // 1 s into the 5 s handler
      a().signal('SIGSTOP');
      let frozen = true;
      try {
        const b = await startServer(env('b'));
        spare.push(b);
        // Sweeps by the second server: nothing is due until a's lease ends, then it takes the alert over.
        await until('the alert completed by b', async () => {
          const found = handlerRuns(await log().list(sent.id));
          if (found.some((run) => run.instance === 'b' && run.outcome === 'done')) return true;
          expect((await sweep(b)).status).toBe(200);
          return undefined;
        });
        a().signal('SIGCONT');
        frozen = false;
        // a wakes up: its renewal timer finds the lease ended, context.signal aborts, no side effect.
        await until("a's late run ended", async () => {
          const found = handlerRuns(await log().list(sent.id));
          return found.find((run) => run.instance === 'a' && run.outcome !== 'running');
        });
        // Its log line comes through `next start`'s own output, which may reach this process
        // after the handler's row did.
        const lost = `the lease on alert ${sent.id} was lost`;
        await until(
          "a's lease-lost log line",
          () => Promise.resolve(a().run.output().includes(lost) ? true : undefined),
          10_000,
        );
        // a sweep by a after its freeze does not retake the alert it lost (the double run)
        expect((await sweep(a())).status).toBe(200);
        const tries = handlerRuns(await log().list(sent.id));
        expect(
          tries.map(({ instance, attempt, stalls, outcome }) => ({
            instance,
            attempt,
            stalls,
            outcome,
          })),
        ).toEqual([
          { instance: 'a', attempt: 0, stalls: 0, outcome: 'lease-lost' },
          { instance: 'b', attempt: 0, stalls: 1, outcome: 'done' },
        ]);
        const counts = await alertStore().counts();
        expect(counts).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
        expect(counts.completed).toBe(completedBefore + 1);
        expect(
          (await alertStore().failed({ limit: 100 })).some((alert) => alert.id === sent.id),
        ).toBe(false);
        expect(onErrorCalls(await log().list(sent.id))).toEqual([]);
        // a serves again after its freeze
        const next = delivery('quick_');
        expect(await post(a(), next)).toBe(202);
        await until('a handles a new alert', async () =>
          handlerRuns(await log().list(next.id)).some((run) => run.outcome === 'done')
            ? true
            : undefined,
        );
      } finally {
        if (frozen) a().signal('SIGCONT');
      }
    }, 120_000);
  },
);
