import {
  withTimeout,
  type AlertStore,
  type FailedAlert,
  type FailedListOptions,
  type QueueCounts,
  type QueueHealth,
  type QueuedAlert,
  type StoredAlert,
} from '@churn-risk/core';
import { Job, Queue, Worker, type JobsOptions } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { openConnections, type Connections } from './connection.js';
import { countJobs, listFailed } from './failed-alerts.js';
import { JOB_NAME, QUEUE_NAME, toQueuedAlert, type AlertJobData } from './job-data.js';
import { jobStore, type JobStore } from './job-store.js';

import {
  resolveRedisQueueOptions,
  type RedisQueueOptions,
  type ResolvedRedisQueueOptions,
} from './options.js';

/**
 * How long a take waits for work on BullMQ's marker before it answers "nothing due", in seconds
 * (BullMQ's `drainDelay`): also the longest a consuming process's `close()` waits for its take.
 */
const TAKE_WAIT_SECONDS = 1;

/** BullMQ's refusals of a write whose lock is not the caller's: the lease was lost. */
const LEASE_LOST =
  /^(Missing key for job|Missing lock for job|Job .* is not in the .* state|Lock mismatch for job)/;

/** The `AlertStore` of `createRedisQueue`: BullMQ's jobs, taken with its manual job API. */
export interface RedisAlertStore extends AlertStore {
  /** The BullMQ queue, for BullMQ's own tools (read-only use). */
  readonly bullQueue: Queue<AlertJobData>;
}

class BullMqAlertStore implements RedisAlertStore {
  readonly kind = 'redis';
  readonly bullQueue: Queue<AlertJobData>;
  readonly #options: ResolvedRedisQueueOptions;
  readonly #connections: Connections;
  readonly #scripts: JobStore;
  readonly #jobOptions: JobsOptions;
  /** Fetches jobs and finds stalled ones; made at the first take or reclaim. */
  #worker: Worker<AlertJobData> | undefined;
  /** Jobs this instance took, until their verdict is written. */
  readonly #taken = new Map<string, Job<AlertJobData>>();
  #closed: Promise<void> | undefined;

  constructor(options: ResolvedRedisQueueOptions) {
    this.#options = options;
    this.#connections = openConnections(options.connection);
    this.bullQueue = new Queue<AlertJobData>(QUEUE_NAME, {
      connection: this.#connections.client,
      prefix: options.prefix,
    });
    this.bullQueue.on('error', () => undefined); // reported once by the connection
    this.#scripts = jobStore(this.bullQueue, this.#connections.client);
    this.#jobOptions = {
      // A completed job is kept as long as its identity: BullMQ forgets a de-duplication key when
      // the job that holds it is removed.
      removeOnComplete: { age: Math.ceil(options.dedupeTtlMs / 1000) },
      removeOnFail: { age: Math.ceil(options.keepFailedMs / 1000) },
    };
  }

  async accept(
    entry: QueuedAlert,
    options: { dedupeTtlMs: number },
  ): Promise<'accepted' | 'duplicate'> {
    const jobId = randomUUID();
    // One Lua script: SET the identity NX PX ttl and store the job, or neither (BullMQ's
    // addStandardJob with de-duplication). A duplicate gets the id of the job that holds it.
    const data: AlertJobData = { ...entry, tries: 0, succeeded: [] };
    const job = await this.bullQueue.add(JOB_NAME, data, {
      ...this.#jobOptions,
      jobId,
      deduplication: { id: entry.id, ttl: options.dedupeTtlMs },
    });
    return job.id === jobId ? 'accepted' : 'duplicate';
  }

  async take(options: { token: string; leaseMs: number }): Promise<StoredAlert | undefined> {
    if (this.#closed !== undefined) return undefined;
    // Typed as always a job; BullMQ answers undefined when nothing is due.
    const fetched = (await this.#fetcher().getNextJob(options.token, { block: true })) as
      Job<AlertJobData> | undefined;
    if (fetched === undefined) return undefined;
    // Bound to the queue's connection, so that its verdict is written after the fetcher stopped.
    const job = Job.fromJSON<AlertJobData>(this.bullQueue, fetched.asJSON(), fetched.id);
    const id = String(job.id);
    if (options.leaseMs !== this.#options.lockDurationMs) {
      await job.extendLock(options.token, options.leaseMs);
    }
    this.#taken.set(id, job);
    return {
      id,
      entry: toQueuedAlert(job.data),
      tries: job.data.tries,
      succeeded: job.data.succeeded,
      stalls: job.stalledCounter,
    };
  }

  async extend(id: string, token: string, leaseMs: number): Promise<boolean> {
    const job = await this.#job(id);
    return job !== undefined && (await job.extendLock(token, leaseMs)) === 1;
  }

  complete(id: string, token: string): Promise<boolean> {
    return this.#write(id, async (job) => {
      await job.moveToCompleted(undefined, token, false);
      return true;
    });
  }

  scheduleRetry(
    id: string,
    token: string,
    verdict: { delayMs: number; succeeded: readonly string[]; error: Error },
  ): Promise<boolean> {
    return this.#write(id, async (job) => {
      if (!(await this.#record(job, token, verdict.succeeded))) return false;
      await job.moveToDelayed(Date.now() + verdict.delayMs, token);
      return true;
    });
  }

  fail(
    id: string,
    token: string,
    verdict: { error: Error; succeeded: readonly string[] },
  ): Promise<boolean> {
    return this.#write(id, async (job) => {
      if (!(await this.#record(job, token, verdict.succeeded))) return false;
      // One try per job as far as BullMQ knows (attempts 1): this moves it to the failed set.
      await job.moveToFailed(new Error(verdict.error.message), token, false);
      return true;
    });
  }

  async reclaimExpired(_options: { maxStalls: number }): Promise<number> {
    // BullMQ's stalled check (two phases: an active job is marked, and moved back to wait at the
    // next check if its lock is gone). `maxStalledCount` is the store's `maxStalls`; the limit
    // itself is applied by core at the next take, from the job's stall count.
    const fetcher = this.#fetcher();
    let reclaimed = 0;
    const count = (): void => {
      reclaimed++;
    };
    fetcher.on('stalled', count);
    try {
      await (
        fetcher as unknown as { moveStalledJobsToWait(): Promise<void> }
      ).moveStalledJobsToWait();
    } finally {
      fetcher.off('stalled', count);
    }
    return reclaimed;
  }

  failed(options?: FailedListOptions): Promise<FailedAlert[]> {
    return listFailed(this.bullQueue, options);
  }

  async retry(id: string): Promise<void> {
    const job =
      (await this.bullQueue.getJob(id)) ??
      (await this.bullQueue
        .getDeduplicationJobId(id)
        .then((jobId) => (jobId ? this.bullQueue.getJob(jobId) : undefined)));
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

  counts(): Promise<QueueCounts> {
    return countJobs(this.bullQueue);
  }

  async depth(): Promise<number> {
    const counts = await countJobs(this.bullQueue);
    return counts.waiting + counts.delayed;
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

  /** Stops the fetcher (a take waiting on BullMQ's marker ends): jobs are still written. */
  async stopTaking(): Promise<void> {
    await this.#worker?.close(true);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.stopTaking();
      await this.bullQueue.close();
      await this.#connections.close();
    })();
    return this.#closed;
  }

  /** The worker that fetches jobs (BullMQ's manual processing: no processor of its own). */
  #fetcher(): Worker<AlertJobData> {
    if (this.#worker !== undefined) return this.#worker;
    const options = this.#options;
    const worker = new Worker<AlertJobData>(QUEUE_NAME, null, {
      connection: this.#connections.workerClient(),
      prefix: options.prefix,
      autorun: false,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalls,
      drainDelay: TAKE_WAIT_SECONDS,
    });
    worker.on('error', () => undefined); // reported once by the connection
    this.#worker = worker;
    return worker;
  }

  async #job(id: string): Promise<Job<AlertJobData> | undefined> {
    return this.#taken.get(id) ?? (await Job.fromId<AlertJobData>(this.bullQueue, id));
  }

  /** A fenced write: false when BullMQ refuses it because the lock is not the caller's. */
  async #write(id: string, write: (job: Job<AlertJobData>) => Promise<boolean>): Promise<boolean> {
    const job = await this.#job(id);
    if (job === undefined) return false;
    try {
      const written = await write(job);
      this.#taken.delete(id);
      return written;
    } catch (error) {
      if (error instanceof Error && LEASE_LOST.test(error.message)) {
        this.#taken.delete(id);
        return false;
      }
      throw error; // Redis did not answer: core tries the write again
    }
  }

  /** Stores one more try and the record of succeeded handlers, while `token` holds the lock. */
  #record(job: Job<AlertJobData>, token: string, succeeded: readonly string[]): Promise<boolean> {
    const data: AlertJobData = {
      ...job.data,
      tries: job.data.tries + 1,
      succeeded: [...succeeded],
    };
    return this.#scripts.writeIfLocked(job, token, data);
  }

  /**
   * Puts a failed job back with its tries and stalls counted afresh (the handlers that succeeded
   * stay recorded); `false` when it is not failed (any more).
   */
  async #retryJob(job: Job<AlertJobData>): Promise<boolean> {
    if (!(await job.isFailed())) return false;
    await job.updateData({ ...job.data, tries: 0 });
    // BullMQ's retry keeps the stall count: a poison alert retried after a fix would be failed
    // again at its first stall.
    await this.#scripts.forgetStalls(job);
    try {
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    } catch (error) {
      if (await job.isFailed()) throw error;
      return false; // retried by someone else meanwhile
    }
    return true;
  }
}

/**
 * The Redis `AlertStore` (SPEC 9 and 17), on BullMQ, with the options of `createRedisQueue`
 * (which runs it under core's `createDurableQueue`). Use it directly with `storeContract`.
 *
 * @example
 * storeContract({ describe, it }, {
 *   name: 'redis',
 *   create: (scope) => createRedisStore({ connection: url, prefix: scope, lockDurationMs: 300 }),
 *   unreachable: () => createRedisStore({ connection: 'redis://127.0.0.1:1' }),
 * });
 */
export function createRedisStore(options: RedisQueueOptions): RedisAlertStore {
  return new BullMqAlertStore(resolveRedisQueueOptions(options));
}
