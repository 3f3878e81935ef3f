import type {
  AcceptResult,
  AcceptedAlert,
  AlertProcessor,
  AlertQueue,
  QueueHealth,
  QueuedAlert,
} from '@churn-risk/core';
import { Queue, Worker, type JobsOptions } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { openConnections, type Connections } from './connection.js';
import {
  countJobs,
  listFailed,
  type FailedAlert,
  type FailedListOptions,
  type QueueCounts,
} from './failed-alerts.js';
import { JOB_NAME, QUEUE_NAME, type AlertJobData } from './job-data.js';
import {
  resolveRedisQueueOptions,
  type RedisQueueOptions,
  type ResolvedRedisQueueOptions,
} from './options.js';
import { processAlertJob } from './process-job.js';
import { pollUntil, withTimeout } from './timing.js';

const ACCEPTED: AcceptedAlert = Object.freeze({ done: Promise.resolve() });
const BACKOFF_TYPE = 'churn-risk';

/** The queue `createRedisQueue` returns: an `AlertQueue` plus the failed-alert tools. */
export interface RedisQueue extends AlertQueue {
  /** Failed alerts (after all their tries), newest first. */
  failed(options?: FailedListOptions): Promise<FailedAlert[]>;
  /**
   * Puts a failed alert back to be processed, with its tries counted afresh; handlers that already
   * succeeded for it are not run again. `id` is the job id `failed()` lists, or the alert identity.
   * Rejects with a `TypeError` when there is no such failed alert.
   */
  retry(id: string): Promise<void>;
  /** Puts every failed alert back; resolves with how many. */
  retryAll(): Promise<number>;
  /** Jobs by state, across every process that shares the Redis. */
  counts(): Promise<QueueCounts>;
  /** Alerts waiting in Redis for any worker (waiting or delayed), for the queue-depth gauge. */
  depth(): Promise<number>;
  health(): Promise<QueueHealth>;
  /** The BullMQ queue, for BullMQ's own tools (read-only use). */
  readonly bullQueue: Queue<AlertJobData>;
}

class RedisAlertQueue implements RedisQueue {
  readonly kind = 'redis';
  readonly processesInline = false;
  readonly bullQueue: Queue<AlertJobData>;
  readonly #options: ResolvedRedisQueueOptions;
  readonly #connections: Connections;
  #processor: AlertProcessor | undefined;
  #jobOptions: JobsOptions = {};
  #worker: Worker<AlertJobData> | undefined;
  #running = 0;
  #closed: Promise<void> | undefined;

  constructor(options: ResolvedRedisQueueOptions) {
    this.#options = options;
    this.#connections = openConnections(options.connection);
    this.bullQueue = new Queue<AlertJobData>(QUEUE_NAME, {
      connection: this.#connections.client,
      prefix: options.prefix,
    });
    this.bullQueue.on('error', () => undefined); // reported once by the connection
  }

  attach(processor: AlertProcessor): void {
    if (this.#processor !== undefined) throw new TypeError('This queue is already attached.');
    this.#processor = processor;
    this.#jobOptions = {
      attempts: processor.retry.retries + 1,
      backoff: { type: BACKOFF_TYPE },
      // A completed job is kept as long as its identity: BullMQ forgets a de-duplication key when
      // the job that holds it is removed.
      removeOnComplete: { age: Math.ceil(this.#options.dedupeTtlMs / 1000) },
      removeOnFail: { age: Math.ceil(this.#options.keepFailedMs / 1000) },
    };
  }

  accept(entry: QueuedAlert): Promise<AcceptResult> {
    if (this.#closed !== undefined) return Promise.reject(new Error('The queue is closed.'));
    const jobId = randomUUID();
    // One Lua script: SET the identity NX PX ttl and store the job, or neither (BullMQ's
    // addStandardJob with de-duplication). A duplicate gets the id of the job that holds it.
    // The queued alert is the job's data as it is (JSON drops an absent traceContext).
    const added = this.bullQueue.add(JOB_NAME, entry, {
      ...this.#jobOptions,
      jobId,
      deduplication: { id: entry.id, ttl: this.#options.dedupeTtlMs },
    });
    return withTimeout(
      added,
      this.#options.enqueueTimeoutMs,
      'Redis did not record the alert',
    ).then((job): AcceptResult => (job.id === jobId ? ACCEPTED : 'duplicate'));
  }

  async release(id: string): Promise<void> {
    // Only used by sync mode, which a Redis queue does not run; kept for the interface.
    await this.bullQueue.removeDeduplicationKey(id);
  }

  consume(): void {
    const processor = this.#processor;
    if (processor === undefined || this.#worker !== undefined || this.#closed !== undefined) return;
    const options = this.#options;
    const worker = new Worker<AlertJobData>(
      QUEUE_NAME,
      async (job) => {
        this.#running++;
        try {
          await processAlertJob(processor, job);
        } finally {
          this.#running--;
        }
      },
      {
        connection: this.#connections.workerClient(),
        prefix: options.prefix,
        concurrency: processor.concurrency,
        lockDuration: options.lockDurationMs,
        stalledInterval: options.stalledIntervalMs,
        // A process killed mid-alert is not the alert's fault: take it over again and again.
        maxStalledCount: 1000,
        settings: {
          backoffStrategy: (attemptsMade: number) => processor.retry.delayMs(attemptsMade),
        },
      },
    );
    worker.on('error', () => undefined); // reported once by the connection
    this.#worker = worker;
  }

  idle(signal?: AbortSignal): Promise<void> {
    // A consuming process drains the shared queue: nothing waiting, delayed or running anywhere;
    // a process that only accepts has nothing of its own to wait for.
    return pollUntil(async () => {
      if (this.#running > 0) return false;
      if (this.#worker === undefined) return true;
      const counts = await countJobs(this.bullQueue);
      return counts.waiting + counts.active + counts.delayed === 0;
    }, signal);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      // Stops taking jobs and waits for the running ones; their locks are released.
      await this.#worker?.close();
      await this.bullQueue.close();
      await this.#connections.close();
    })();
    return this.#closed;
  }

  get queued(): number {
    return 0; // waiting alerts live in Redis: see counts() and depth()
  }

  /**
   * Alerts waiting in Redis for any worker: waiting, and delayed (a retry scheduled). Read by the
   * `churn_risk.queue.depth` gauge; rejects when Redis does not answer within `enqueueTimeoutMs`.
   */
  async depth(): Promise<number> {
    const read = countJobs(this.bullQueue);
    const counts = await withTimeout(read, this.#options.enqueueTimeoutMs, 'Redis did not answer');
    return counts.waiting + counts.delayed;
  }

  get running(): number {
    return this.#running;
  }

  async health(): Promise<QueueHealth> {
    try {
      const ping = this.bullQueue.waitUntilReady().then(() => this.#connections.client.ping());
      await withTimeout(ping, this.#options.enqueueTimeoutMs, 'Redis did not answer PING');
      return { reachable: true };
    } catch (error) {
      return { reachable: false, error: error instanceof Error ? error.message : 'unreachable' };
    }
  }

  failed(options?: FailedListOptions): Promise<FailedAlert[]> {
    return listFailed(this.bullQueue, options);
  }

  async retry(id: string): Promise<void> {
    const job =
      (await this.bullQueue.getJob(id)) ??
      (await this.#jobOfIdentity(id).then((jobId) =>
        jobId === undefined ? undefined : this.bullQueue.getJob(jobId),
      ));
    if (job === undefined || !(await job.isFailed())) {
      throw new TypeError(`No failed alert with id "${id}".`);
    }
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
  }

  async retryAll(): Promise<number> {
    let retried = 0;
    for (;;) {
      const jobs = await this.bullQueue.getFailed(0, 99);
      if (jobs.length === 0) return retried;
      for (const job of jobs) {
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        retried++;
      }
    }
  }

  counts(): Promise<QueueCounts> {
    return countJobs(this.bullQueue);
  }

  async #jobOfIdentity(identity: string): Promise<string | undefined> {
    const jobId = await this.bullQueue.getDeduplicationJobId(identity);
    return jobId ?? undefined;
  }
}

/**
 * A durable, shared queue for `createReceiver({ queue })` (SPEC section 9): an alert is answered
 * `202` only once Redis has recorded its identity and stored its job, in one atomic operation;
 * BullMQ workers in every consuming process run the handlers, retries are delayed jobs, and an
 * alert whose worker died is taken over once its lock expires.
 *
 * @example
 * const queue = createRedisQueue({ connection: process.env.REDIS_URL! });
 * const receiver = createReceiver({ secret, queue, consume: false }); // a web process
 */
export function createRedisQueue(options: RedisQueueOptions): RedisQueue {
  return new RedisAlertQueue(resolveRedisQueueOptions(options));
}
