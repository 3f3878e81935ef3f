/**
 * The pg-boss anchors of `pnpm bench drain`, written with pg-boss's documented API
 * (https://timgit.github.io/pg-boss/, `api/jobs.md`, `api/workers.md`): `send` with the options a
 * production route sets (as `postgres/hand-pgboss.ts`), on a queue created with `notify: true`,
 * and `work()` on an instance started with `useListenNotify: true` (the docs' low-latency
 * dispatch) and the shortest poll the docs allow (0.5 s), in the two ways the docs give to run
 * ten jobs at once:
 *
 * - `side`: `localConcurrency: 10`, `batchSize: 1` (ten workers, one job each, as the docs'
 *   "Understanding concurrency options" says) with `burstWhenReadyExceeds: 1` (fetch again at
 *   once while the cached backlog count says that jobs wait);
 * - `batchSide`: one worker, `batchSize: 10` with `burstWhenBatchFull: true` (fetch again at once
 *   while batches come back full), the handler starting each job of the batch at once.
 *
 * Runs on Node >= 22.12.
 */
import { loadPgBoss, type PgBoss, type WorkOptions } from '../lib/pg-boss-api.js';
import {
  CONCURRENCY,
  identityOf,
  type Consumer,
  type Producer,
  type Side,
  type StampedAlert,
} from './side.js';

const QUEUE = 'alerts';

interface JobData {
  id: string;
  alert: StampedAlert;
  receivedAt: number;
}

/**
 * An instance on `url`. Its queue statistics are computed and read back every second
 * (`superviseIntervalSeconds`, `monitorIntervalSeconds`, `queueCacheIntervalSeconds`: the docs'
 * note on `burstWhenReadyExceeds` says that its reaction is bounded by them, 60 s by default;
 * with the defaults the cached backlog stayed 0 and the ten workers took ten alerts per 30 s
 * poll of a NOTIFY queue).
 */
async function started(url: string, useListenNotify: boolean): Promise<PgBoss> {
  const { PgBoss } = await loadPgBoss();
  const boss = new PgBoss({
    connectionString: url,
    useListenNotify,
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
    queueCacheIntervalSeconds: 1,
  });
  boss.on('error', (error) => {
    console.error(`pg-boss: ${error instanceof Error ? error.message : String(error)}`);
  });
  await boss.start();
  return boss;
}

function pgBossSide(options: WorkOptions): Side {
  return {
    async producer({ url }): Promise<Producer> {
      const boss = await started(url, false);
      if ((await boss.getQueue(QUEUE)) === null) await boss.createQueue(QUEUE, { notify: true });
      return {
        async enqueue(alert) {
          const data: JobData = { id: identityOf(alert), alert, receivedAt: Date.now() };
          await boss.send(QUEUE, data, { retryLimit: 3, retryDelay: 1, retryBackoff: true });
        },
        async purge() {
          await boss.deleteAllJobs(QUEUE);
        },
        close: () => boss.stop({ graceful: false }),
      };
    },
    async consumer({ url }, onStart): Promise<Consumer> {
      const boss = await started(url, true);
      // Part of the start-up (not timed): the statistics cache holds the backlog before the first
      // fetch, else each worker, finding no burst due, waits for the next poll (30 s under NOTIFY).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      return {
        async start() {
          await boss.work<JobData>(QUEUE, options, (jobs) => {
            for (const job of jobs) onStart(job.data.alert);
            return Promise.resolve();
          });
        },
        close: () => boss.stop({ graceful: true, timeout: 10_000 }),
      };
    },
  };
}

export const side = pgBossSide({
  localConcurrency: CONCURRENCY,
  batchSize: 1,
  pollingIntervalSeconds: 0.5,
  burstWhenReadyExceeds: 1,
});

export const batchSide = pgBossSide({
  batchSize: CONCURRENCY,
  burstWhenBatchFull: true,
  pollingIntervalSeconds: 0.5,
});
