/**
 * The Redis anchor of `pnpm bench drain`, written with BullMQ's documented API
 * (https://docs.bullmq.io/guide/workers, `guide/jobs`): `queue.add` with the options a production
 * route sets (as `redis/hand-bullmq.ts`: retries with backoff, completed and failed jobs kept,
 * de-duplication on the alert identity), and one `Worker` with concurrency 10 and a no-op
 * processor, created with `autorun: false` and started by `worker.run()`.
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker, type JobsOptions } from 'bullmq';
import {
  CONCURRENCY,
  identityOf,
  type Consumer,
  type Producer,
  type Side,
  type StampedAlert,
} from './side.js';

const QUEUE = 'alerts';
const JOB_OPTIONS: JobsOptions = {
  attempts: 4,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 72 * 3600 },
  removeOnFail: { age: 30 * 24 * 3600 },
};
const DEDUPE_TTL_MS = 72 * 3_600_000;

interface JobData {
  id: string;
  alert: StampedAlert;
  receivedAt: number;
}

const connectionOf = (url: string): { host: string; port: number } => {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port) };
};

export const side: Side = {
  producer({ url, namespace }): Promise<Producer> {
    const queue = new Queue<JobData>(QUEUE, { connection: connectionOf(url), prefix: namespace });
    return Promise.resolve({
      async enqueue(alert) {
        const id = identityOf(alert);
        await queue.add(
          'churn_risk_alert',
          { id, alert, receivedAt: Date.now() },
          { ...JOB_OPTIONS, jobId: randomUUID(), deduplication: { id, ttl: DEDUPE_TTL_MS } },
        );
      },
      async purge() {
        await queue.drain(true);
      },
      close: () => queue.close(),
    });
  },
  async consumer({ url, namespace }, onStart): Promise<Consumer> {
    const worker = new Worker<JobData>(
      QUEUE,
      (job) => {
        onStart(job.data.alert);
        return Promise.resolve();
      },
      {
        connection: connectionOf(url),
        prefix: namespace,
        concurrency: CONCURRENCY,
        autorun: false,
      },
    );
    worker.on('error', (error) => {
      console.error(`bullmq worker: ${error.message}`);
    });
    await worker.waitUntilReady();
    return {
      start() {
        void worker.run();
        return Promise.resolve();
      },
      close: () => worker.close(),
    };
  },
};
