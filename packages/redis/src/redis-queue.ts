import type {
  AcceptResult,
  AcceptedAlert,
  AlertProcessor,
  AlertQueue,
  QueueHealth,
  QueuedAlert,
} from '@churn-risk/core';
import { AlertStalledError } from '@churn-risk/core';
import { Queue, Worker, type Job, type JobsOptions } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { openConnections, type Connections } from './connection.js';
import {
  countJobs,
  listFailed,
  type FailedAlert,
  type FailedListOptions,
  type QueueCounts,
} from './failed-alerts.js';
import { JOB_NAME, QUEUE_NAME, toQueuedAlert, type AlertJobData } from './job-data.js';
import { jobStore, type JobStore } from './job-store.js';
import {
  resolveRedisQueueOptions,
  type RedisQueueOptions,
  type ResolvedRedisQueueOptions,
} from './options.js';
import { processAlertJob } from './process-job.js';
import { pollUntil, withTimeout } from './timing.js';

const ACCEPTED: AcceptedAlert = Object.freeze({ done: Promise.resolve() });
const BACKOFF_TYPE = 'churn-risk';
/**
 * BullMQ's own tries of a job. Core counts the alert's tries in the job's data and schedules its
 * retries (delayed jobs); BullMQ's count only matters for an error of Redis itself while a try's
 * verdict is stored, which is then retried with the receiver's backoff instead of failing.
 */
const STORE_ATTEMPTS = 100;

/** The queue `createRedisQueue` returns: an `AlertQueue` plus the failed-alert tools. */
export interface RedisQueue extends AlertQueue {
  /** Failed alerts (after all their tries), newest first. */
  failed(options?: FailedListOptions): Promise<FailedAlert[]>;
  /**
   * Puts a failed alert back to be processed, with its tries and its stalls (`maxStalls`) counted
   * afresh; handlers that already succeeded for it are not run again. `id` is the job id
   * `failed()` lists, or the alert identity. Rejects with a `TypeError` when there is no such
   * failed alert.
   */
  retry(id: string): Promise<void>;
  /**
   * Puts back every alert that is in the failed set when it is called (a snapshot), once each,
   * also when some fail again at once; resolves with how many were put back.
   */
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
  readonly durable = true;
  readonly bullQueue: Queue<AlertJobData>;
  readonly #options: ResolvedRedisQueueOptions;
  readonly #connections: Connections;
  readonly #store: JobStore;
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
    this.#store = jobStore(this.bullQueue, this.#connections.client);
  }

  attach(processor: AlertProcessor): void {
    if (this.#processor !== undefined) throw new TypeError('This queue is already attached.');
    this.#processor = processor;
    this.#jobOptions = {
      attempts: STORE_ATTEMPTS,
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
    const store = this.#store;
    const worker = new Worker<AlertJobData>(
      QUEUE_NAME,
      async (job, token) => {
        this.#running++;
        try {
          await processAlertJob(processor, job, token ?? '', store);
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
        // An alert whose worker died more than maxStalls times is failed at its next take.
        maxStalledCount: options.maxStalls,
        settings: {
          backoffStrategy: (attemptsMade: number) => processor.retry.delayMs(attemptsMade),
        },
      },
    );
    worker.on('error', () => undefined); // reported once by the connection
    worker.on('failed', (job) => {
      // BullMQ failed a job that stalled too often at its take, without running it: core calls
      // onError once (in the one process that took it).
      if (job?.deferredFailure === undefined) return;
      void processor.giveUp(toQueuedAlert(job.data), triesOf(job), stalledError(job));
    });
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
    if (job === undefined || !(await this.#retryJob(job))) {
      throw new TypeError(`No failed alert with id "${id}".`);
    }
  }

  async retryAll(): Promise<number> {
    // The ids in the failed set now: an alert that fails again at once is not taken twice.
    const ids = await this.bullQueue.getRanges(['failed'], 0, -1, true);
    let retried = 0;
    for (const id of ids) {
      const job = await this.bullQueue.getJob(id);
      if (job !== undefined && (await this.#retryJob(job))) retried++;
    }
    return retried;
  }

  /**
   * Puts a failed job back with its tries and stalls counted afresh (the handlers that succeeded
   * stay recorded); `false` when it is not failed (any more).
   */
  async #retryJob(job: Job<AlertJobData>): Promise<boolean> {
    if (!(await job.isFailed())) return false;
    if (job.data.tries !== undefined) await job.updateData({ ...job.data, tries: 0 });
    // BullMQ's retry keeps the stall count: a poison alert retried after a fix would be failed
    // again at its first stall.
    await this.#store.forgetStalls(job);
    try {
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    } catch (error) {
      if (await job.isFailed()) throw error;
      return false; // retried by someone else meanwhile
    }
    return true;
  }

  counts(): Promise<QueueCounts> {
    return countJobs(this.bullQueue);
  }

  async #jobOfIdentity(identity: string): Promise<string | undefined> {
    const jobId = await this.bullQueue.getDeduplicationJobId(identity);
    return jobId ?? undefined;
  }
}

/** Tries made for a job's alert: core's count, or BullMQ's for a job stored by 0.x. */
function triesOf(job: Job<AlertJobData>): number {
  return job.data.tries ?? job.attemptsMade;
}

/** The error of a job BullMQ failed because its worker died mid-alert too often. */
function stalledError(job: Job<AlertJobData>): AlertStalledError {
  return new AlertStalledError(job.stalledCounter);
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
