import {
  withTimeout,
  type AlertRecord,
  type AlertStore,
  type AlertVerdict,
  type StoreAcceptOptions,
  type TakeOptions,
  type UserOrderKey,
  type FailedListOptions,
  type QueueCounts,
  type QueueHealth,
} from '@churn-risk/core/store';
import { Job, Queue, Worker, type JobJson, type JobsOptions } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { openConnections, type Connections, type RedisClient } from './connection.js';
import { countJobs, listFailed } from './failed-alerts.js';
import { writeDataIfLeased } from './fenced-data.js';
import { JOB_NAME, QUEUE_NAME, type AlertJobData } from './job-data.js';
import {
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './options.js';
import { CHECK_KEY_TTL_MS, reclaimExpiredJobs } from './reclaim.js';
import { failedNow, retryFailedJobs, type Failure } from './retry-failed.js';
import { isNoScript, orderedJobId, UserOrder, type Turn } from './user-order.js';

/**
 * How long a take waits for work on BullMQ's marker before it answers "nothing due", in seconds
 * (BullMQ's `drainDelay`). `stopTaking` ends the wait at once.
 */
const TAKE_WAIT_SECONDS = 1;
/**
 * How many alerts of one user a lease runs in a row, each completion going on with the user's
 * next (`CONTINUE`), before the next one is moved up to wait in turn with everyone's: a user with
 * a long line never keeps a consumer from the others.
 */
const MAX_STREAK = 16;
/** How long `health()` waits for Redis (a fixed bound: `enqueueTimeoutMs` is the accept's). */
const HEALTH_TIMEOUT_MS = 2_000;

/** The `AlertStore` of `createRedisQueue`: BullMQ's jobs, taken with its manual job API. */
export interface RedisAlertStore extends AlertStore {
  /** The BullMQ queue, for BullMQ's own tools (read-only use). */
  readonly bullQueue: Queue<AlertJobData>;
  /** Puts back the alerts whose lease expired; does the whole job at every call (see README). */
  reclaimExpired(): Promise<number>;
}

/** An alert this store instance handed out, until its verdict is written or its lease is lost. */
interface Lease {
  /** The job, bound to the consumer worker: its writes go through the worker's connection. */
  readonly job: Job<AlertJobData>;
  /** The token core holds the alert by. */
  readonly token: string;
  /**
   * The token BullMQ's lock holds: core's, or for an alert that a completion took next (BullMQ's
   * `fetchNext` locks it with the completing token), the completing alert's lock token.
   */
  readonly lockToken: string;
  /** The job's data as last written. */
  data: AlertJobData;
  /** Taken in order per user: whether it was parked before (undefined: not known here). */
  parked?: boolean;
  /** Taken in order per user: whether its user's line held other alerts (see `CONTINUE`). */
  more?: boolean;
  /** How many alerts of its user this lease ran in a row, this one included (see `MAX_STREAK`). */
  streak?: number;
}

/** The next job's data that `moveToCompleted(..., fetchNext)` answers with, if it took one. */
function fetchedJob(result: unknown): { json: JobJson; id: string } | undefined {
  if (!Array.isArray(result)) return undefined;
  const [json, id] = result as unknown[];
  if (typeof json !== 'object' || json === null || typeof id !== 'string') return undefined;
  return { json: json as JobJson, id };
}

/** What `completeAndTake` resolves with: whether the completion went through, the next alert. */
type Completion = Awaited<ReturnType<AlertStore['completeAndTake']>>;

/** A completion that went through, and the alert it took next. */
function completedWith(next: AlertRecord<'taken'> | undefined): Completion {
  return next === undefined ? NOTHING_NEXT : { completed: true, next };
}

/** A completion that took nothing next. */
const NOTHING_NEXT: Completion = Object.freeze({ completed: true, next: undefined });

class BullMqAlertStore implements RedisAlertStore {
  readonly kind = 'redis';
  readonly bullQueue: Queue<AlertJobData>;
  readonly #options: ResolvedRedisStoreOptions;
  readonly #connections: Connections;
  readonly #jobOptions: JobsOptions;
  /** Takes jobs, writes the verdicts and runs the reclaims; made at the first of them. */
  #consumer: { worker: Worker<AlertJobData>; redis: RedisClient } | undefined;
  readonly #leases = new Map<string, Lease>();
  /** The keys and scripts of the order per user. */
  readonly #order: UserOrder;
  /** The key of a job is this and its id (BullMQ's `queue.toKey(id)`). */
  readonly #jobKeyPrefix: string;
  #stopped = false;
  #closed: Promise<void> | undefined;

  constructor(options: ResolvedRedisStoreOptions) {
    this.#options = options;
    this.#connections = openConnections(options.connection);
    this.bullQueue = new Queue<AlertJobData>(QUEUE_NAME, {
      connection: this.#connections.client,
      prefix: options.prefix,
    });
    this.bullQueue.on('error', () => undefined); // reported once by the connection
    const key = (name: string): string => this.bullQueue.toKey(name);
    this.#order = new UserOrder(options.prefix, {
      completed: key('completed'),
      failed: key('failed'),
      delayed: key('delayed'),
      wait: key('wait'),
      marker: key('marker'),
      meta: key('meta'),
      active: key('active'),
      events: key('events'),
      stalled: key('stalled'),
    });
    this.#jobKeyPrefix = this.bullQueue.toKey('');
    this.#jobOptions = {
      // A completed job is kept as long as its identity: BullMQ forgets a de-duplication key when
      // the job that holds it is removed.
      removeOnComplete: { age: Math.ceil(options.dedupeTtlMs / 1000) },
      removeOnFail: { age: Math.ceil(options.keepFailedMs / 1000) },
    };
  }

  async accept(
    entry: AlertRecord<'accepted'>,
    options: StoreAcceptOptions,
  ): Promise<'accepted' | 'duplicate'> {
    if (options.order !== undefined) return this.#acceptInOrder(entry, options, options.order);
    const jobId = randomUUID();
    // One Lua script: SET the identity NX PX ttl and store the job, or neither (BullMQ's
    // addStandardJob with de-duplication). A duplicate gets the id of the job that holds it.
    const data: AlertJobData = { ...entry, tries: 0, succeeded: [], stalls: 0 };
    const job = await this.bullQueue.add(JOB_NAME, data, {
      ...this.#jobOptions,
      jobId,
      deduplication: { id: entry.id, ttl: options.dedupeTtlMs },
      // At the head of the wait list: the next take gets it (the newest such alert first).
      ...(options.first === true ? { lifo: true } : {}),
    });
    return job.id === jobId ? 'accepted' : 'duplicate';
  }

  async take(options: TakeOptions): Promise<AlertRecord<'taken'> | undefined> {
    if (this.#stopped) return undefined;
    const { worker } = this.#consume();
    // Typed as always a job; BullMQ answers undefined when nothing is due.
    const job = (await worker.getNextJob(options.token, { block: options.wait !== false })) as
      Job<AlertJobData> | undefined;
    if (job === undefined) return undefined;
    if (options.perUser === true) return this.#takeInTurn(job, options, options.token);
    return this.#handOut(job, options, options.token);
  }

  async extend(id: string, token: string, leaseMs: number, stalls?: number): Promise<boolean> {
    const lease = await this.#lease(id, token);
    if (lease === undefined) return false;
    if ((await lease.job.extendLock(lease.lockToken, leaseMs)) !== 1) {
      this.#leases.delete(id);
      return false;
    }
    if (stalls === undefined) return true;
    return this.#writeData(lease, { ...lease.data, stalls });
  }

  complete(id: string, token: string): Promise<boolean> {
    return this.#finish(id, token, async (lease) => {
      await lease.job.moveToCompleted(undefined, lease.lockToken, false);
      await this.#ended(lease);
      return true;
    });
  }

  completeAndTake(id: string, token: string, next: TakeOptions): Promise<Completion> {
    const known = this.#leases.get(id);
    // The hot path, an alert handed out here under this token, stays synchronous up to the write.
    if (known?.token === token) return this.#completing(id, known, next);
    // Handed out here under another token (stale): refused; another instance's: BullMQ's lock
    // decides. A refusal takes all the same.
    return this.#lease(id, token).then((lease) =>
      lease === undefined ? this.#takeAfterRefusal(next) : this.#completing(id, lease, next),
    );
  }

  scheduleRetry(
    id: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'retry' }>,
  ): Promise<boolean> {
    return this.#finish(id, token, async (lease) => {
      const dueAt = Date.now() + verdict.delayMs;
      const data = {
        ...lease.data,
        tries: verdict.tries,
        succeeded: [...verdict.succeeded],
        dueAt,
      };
      if (!(await this.#writeData(lease, data))) return false;
      await lease.job.moveToDelayed(dueAt, lease.lockToken);
      return true;
    });
  }

  fail(
    id: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'failed' }>,
  ): Promise<boolean> {
    return this.#finish(id, token, async (lease) => {
      const data = { ...lease.data, tries: verdict.tries, succeeded: [...verdict.succeeded] };
      if (!(await this.#writeData(lease, data))) return false;
      // One try per job as far as BullMQ knows (attempts 1): this moves it to the failed set.
      await lease.job.moveToFailed(new Error(verdict.error.message), lease.lockToken, false);
      await this.#ended(lease);
      return true;
    });
  }

  reclaimExpired(): Promise<number> {
    return reclaimExpiredJobs(this.#consume().worker);
  }

  failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]> {
    return listFailed(this.bullQueue, options);
  }

  async retry(id: string): Promise<void> {
    // By job id, else by alert identity (the job that holds the identity's de-duplication key).
    let retried = await this.#retryJobs([{ id, score: '' }]);
    if (retried.length === 0) {
      // In order per user a job may have gone on to later alerts of its user (`CONTINUE`): only
      // while it holds this alert.
      const jobId = await this.bullQueue.getDeduplicationJobId(id);
      const job = jobId ? await this.bullQueue.getJob(jobId) : undefined;
      if (jobId && job?.data.id === id) retried = await this.#retryJobs([{ id: jobId, score: '' }]);
    }
    if (retried.length === 0) throw new TypeError(`No failed alert with id "${id}".`);
  }

  async retryAll(): Promise<number> {
    // The failures in the failed set now: an alert that fails again at once is not put back
    // twice, and one that another call put back meanwhile is skipped (not counted), also when it
    // failed again since.
    await this.bullQueue.waitUntilReady();
    const failures = await failedNow(this.bullQueue, this.#connections.client);
    return (await this.#retryJobs(failures)).length;
  }

  counts(): Promise<QueueCounts> {
    return this.#counts();
  }

  async depth(): Promise<number> {
    const counts = await this.#counts();
    return counts.waiting + counts.delayed;
  }

  async nextDueInMs(): Promise<number | undefined> {
    // The delayed set is ordered by due time: its first job falls due next.
    const [job] = (await this.bullQueue.getJobs(['delayed'], 0, 0, true)) as (
      Job<AlertJobData> | undefined
    )[];
    if (job === undefined) return undefined;
    const dueAt = job.data.dueAt ?? job.timestamp + job.delay;
    return Math.max(0, dueAt - Date.now());
  }

  async health(): Promise<QueueHealth> {
    try {
      // A write, not a PING: a Redis that answers but refuses writes (maxmemory reached with
      // noeviction, a read-only replica, a failing RDB save) is not healthy. Its error says why.
      const probe = this.bullQueue
        .waitUntilReady()
        .then(() =>
          this.#connections.client.set(
            `${this.#options.prefix}:health`,
            String(Date.now()),
            'PX',
            60_000,
          ),
        );
      await withTimeout(probe, HEALTH_TIMEOUT_MS, 'Redis did not answer within 2 s');
      return { reachable: true };
    } catch (error) {
      return { reachable: false, error: error instanceof Error ? error.message : 'unreachable' };
    }
  }

  /** Ends a take that waits on BullMQ's marker and takes nothing more; writes still go through. */
  async stopTaking(): Promise<void> {
    this.#stopped = true;
    // Closes the worker's blocking connection (a waiting take ends) and stops fetchNext; its
    // main connection is ours, so the verdicts of the alerts still running are written after.
    await this.#consumer?.worker.close(true);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.stopTaking();
      this.#leases.clear();
      await this.bullQueue.close();
      await this.#connections.close();
    })();
    return this.#closed;
  }

  /**
   * The worker that takes jobs, writes verdicts and runs reclaims, and its connection (BullMQ's
   * manual processing: no processor, so BullMQ's own loop, lock renewal and stalled-check timer
   * never run; core runs the loop, the renewals and the reclaims).
   */
  #consume(): { worker: Worker<AlertJobData>; redis: RedisClient } {
    if (this.#consumer !== undefined) return this.#consumer;
    const redis = this.#connections.workerClient();
    const worker = new Worker<AlertJobData>(QUEUE_NAME, null, {
      connection: redis,
      prefix: this.#options.prefix,
      autorun: false,
      skipStalledCheck: true,
      skipLockRenewal: true,
      lockDuration: this.#options.leaseMs,
      // The life of BullMQ's stalled-check key (see reclaim.ts), and core fails poison alerts:
      // BullMQ never fails a job for its stalls.
      stalledInterval: CHECK_KEY_TTL_MS,
      maxStalledCount: Number.MAX_SAFE_INTEGER,
      drainDelay: TAKE_WAIT_SECONDS,
    });
    worker.on('error', () => undefined); // reported once by the connection
    this.#consumer = { worker, redis };
    return this.#consumer;
  }

  /**
   * Completes the alert `lease` holds and takes the next due one. BullMQ's fetchNext: the
   * completion and the take are one script, one round trip, through BullMQ's public backend
   * interface (`IQueueBackend.moveToCompleted`, what `Job.moveToCompleted` calls, without its
   * tracing wrapper). The next job is locked with the completing token (its lock token from now
   * on), for the worker's lockDuration (our leaseMs), and comes back as raw data, which the public
   * `Job.fromJSON` turns into a Job (what the Worker's protected nextJobFromJobData does, without
   * the job-scheduler bookkeeping we do not use). This is the drain's hot path: no async layer of
   * our own (`pnpm bench drain`). A refusal is a lost lease when BullMQ's lock says so, as in
   * `#finish`.
   */
  #completeTaking(id: string, lease: Lease, next: TakeOptions): Promise<Completion> {
    const { worker } = this.#consume();
    const { job, lockToken } = lease;
    // Every job this store adds sets removeOnComplete; `false` keeps a job added without it, as
    // BullMQ does for an unset one (the worker sets none).
    const keep = job.opts.removeOnComplete ?? false;
    return worker
      .getBackend()
      .moveToCompleted(job, undefined, keep, lockToken, !this.#stopped)
      .then(
        ({ result }) => {
          this.#leases.delete(id);
          const fetched = fetchedJob(result);
          if (fetched === undefined) return NOTHING_NEXT;
          const nextJob = Job.fromJSON<AlertJobData>(worker, fetched.json, fetched.id);
          if (next.leaseMs === this.#options.leaseMs) {
            return { completed: true, next: this.#record(nextJob, next.token, lockToken) };
          }
          return this.#handOut(nextJob, next, lockToken).then((alert) => ({
            completed: true,
            next: alert,
          }));
        },
        async (error: unknown) => {
          if (!(await this.#lost(lease))) throw error;
          this.#leases.delete(id);
          return this.#takeAfterRefusal(next);
        },
      );
  }

  /** `#completeTaking`, or `#completeTakingInOrder` when the alert or the take is in order. */
  #completing(id: string, lease: Lease, next: TakeOptions): Promise<Completion> {
    return lease.data.order === undefined && next.perUser !== true
      ? this.#completeTaking(id, lease, next)
      : this.#completeTakingInOrder(id, lease, next);
  }

  /**
   * `#completeTaking` in order per user (the alert was accepted in order, or the take is per
   * user): the completion that goes on with the user's next alert (`#goOn`) while the lease's
   * user has more and its streak is under `MAX_STREAK`, else `#completeThenTakeInOrder`.
   */
  #completeTakingInOrder(id: string, lease: Lease, next: TakeOptions): Promise<Completion> {
    const { order } = lease.data;
    if (
      order !== undefined &&
      lease.more === true &&
      (lease.streak ?? 1) < MAX_STREAK &&
      next.perUser === true &&
      !this.#stopped
    ) {
      return this.#goOn(id, lease, order, next);
    }
    return this.#completeThenTakeInOrder(id, lease, next);
  }

  /**
   * The completion of an alert that holds its user, going on with the user's next alert in the
   * same lease when it is parked (`CONTINUE`, one script); else `#completeThenTakeInOrder`.
   */
  async #goOn(
    id: string,
    lease: Lease,
    order: UserOrderKey,
    next: TakeOptions,
  ): Promise<Completion> {
    const { redis } = this.#consume();
    const { job, lockToken } = lease;
    // Its hand-out is no take of BullMQ's: it counts as the first take of the alert.
    const startsBefore = job.attemptsStarted - 1;
    const answer = await this.#order.continueLine(
      redis,
      this.#jobKeyPrefix,
      { id, order, lockToken, startsBefore },
      next.leaseMs,
      this.#options.dedupeTtlMs,
    );
    if (answer.kind === 'lost') {
      this.#leases.delete(id);
      return this.#takeAfterRefusal(next);
    }
    if (answer.kind === 'none') return this.#completeThenTakeInOrder(id, lease, next);
    const data: AlertJobData = { ...(JSON.parse(answer.data) as AlertJobData), startsBefore };
    job.data = data;
    const newest = Math.max(answer.newest, data.order?.at ?? 0);
    const turn = { parks: 0, newest, more: answer.more };
    return completedWith(this.#record(job, next.token, lockToken, turn, (lease.streak ?? 1) + 1));
  }

  /**
   * BullMQ's completion takes the next job in the same round trip, then one script ends the alert
   * in its user's order and takes the next job in its turn (user-order.ts). A job that is not its
   * user's turn is parked, and the take goes on (`#parkAndTake`).
   */
  #completeThenTakeInOrder(id: string, lease: Lease, next: TakeOptions): Promise<Completion> {
    const { worker, redis } = this.#consume();
    const { job, lockToken } = lease;
    const keep = job.opts.removeOnComplete ?? false;
    return worker
      .getBackend()
      .moveToCompleted(job, undefined, keep, lockToken, !this.#stopped)
      .then(
        ({ result }) => {
          this.#leases.delete(id);
          const fetched = fetchedJob(result);
          const nextJob =
            fetched === undefined
              ? undefined
              : Job.fromJSON<AlertJobData>(worker, fetched.json, fetched.id);
          const ended = lease.data.order && {
            id,
            order: lease.data.order,
            parked: lease.parked ?? true,
          };
          const order = next.perUser === true ? nextJob?.data.order : undefined;
          const taken = order && nextJob && { id: String(nextJob.id), order };
          if (ended === undefined && taken === undefined) {
            return nextJob === undefined
              ? NOTHING_NEXT
              : this.#handOut(nextJob, next, lockToken).then(completedWith);
          }
          return this.#order
            .turn(redis, this.#jobKeyPrefix, ended, taken)
            .then(({ wake, turn }) => {
              // The usual case, the next alert in its turn and no one to wake: no async layer.
              if (wake === undefined && nextJob !== undefined && turn !== undefined) {
                if (next.leaseMs === this.#options.leaseMs) {
                  return completedWith(this.#record(nextJob, next.token, lockToken, turn));
                }
              }
              return this.#nextInOrder(nextJob, taken, wake, turn, next, lockToken);
            });
        },
        async (error: unknown) => {
          if (!(await this.#lost(lease))) throw error;
          this.#leases.delete(id);
          return this.#takeAfterRefusal(next);
        },
      );
  }

  /** The rest of `#completeThenTakeInOrder`: a wake, a park, another lease time. */
  async #nextInOrder(
    nextJob: Job<AlertJobData> | undefined,
    taken: { id: string; order: UserOrderKey } | undefined,
    wake: string | undefined,
    turn: Turn | undefined,
    next: TakeOptions,
    lockToken: string,
  ): Promise<Completion> {
    const woken = wake === undefined ? undefined : this.#promote(wake);
    let alert: AlertRecord<'taken'> | undefined;
    if (nextJob === undefined) alert = undefined;
    else if (taken === undefined || turn !== undefined) {
      alert = await this.#handOut(nextJob, next, lockToken, turn);
    } else alert = await this.#parkAndTake(nextJob, taken.order, next, lockToken);
    await woken;
    return completedWith(alert);
  }

  /**
   * Accepts an alert in order per user: BullMQ's add (with its de-duplication) and the record of
   * the alert in its user's line and of the user's newest time, in one MULTI (one atomic step;
   * the record is written only when the add stored the job).
   */
  async #acceptInOrder(
    entry: AlertRecord<'accepted'>,
    options: StoreAcceptOptions,
    order: UserOrderKey,
  ): Promise<'accepted' | 'duplicate'> {
    const jobId = orderedJobId();
    const data: AlertJobData = { ...entry, tries: 0, succeeded: [], stalls: 0, order };
    const first = options.first === true;
    const jobOptions: JobsOptions = {
      ...this.#jobOptions,
      jobId,
      deduplication: { id: entry.id, ttl: options.dedupeTtlMs },
      // Parked: the record that follows moves the first of its line to wait at once; any other
      // waits for the alert ahead of it, at most leaseMs (a lost move-up never strands it).
      delay: this.#options.leaseMs,
      ...(first ? { lifo: true } : {}),
    };
    const job = new Job<AlertJobData>(this.bullQueue, JOB_NAME, data, jobOptions, jobId);
    const jobKey = this.bullQueue.toKey(jobId);
    const { dedupeTtlMs } = options;
    // BullMQ's Redis client (its escape hatch `RedisQueueBackend.client`), on our connection.
    const multi = (await this.bullQueue.getBackend().client).multi();
    await job.addJob(multi); // queues BullMQ's add script on the MULTI (Job.addJob's transaction)
    this.#order.queueAccept(
      multi as unknown as ChainableCommander,
      jobKey,
      jobId,
      order,
      dedupeTtlMs,
      first,
    );
    const recordAlone = () =>
      this.#order.acceptAlone(this.#connections.client, jobKey, jobId, order, dedupeTtlMs, first);
    const [added, recorded] = (await multi.exec()) ?? [];
    const error = added === undefined ? new Error('The accept was aborted.') : added[0];
    let stored: boolean;
    if (error === null) stored = added?.[1] === jobId;
    else if (isNoScript(error)) {
      // Redis did not know BullMQ's script (its script cache was just flushed): the add alone
      // (which sends the script), then the record; the same job id finds the job if it is stored.
      stored = (await this.bullQueue.add(JOB_NAME, data, jobOptions)).id === jobId;
      if (stored) await recordAlone();
      return stored ? 'accepted' : 'duplicate';
    } else throw error;
    if (!stored) return 'duplicate';
    if (recorded?.[0] != null) {
      // Redis did not know our script: the job is stored, its record follows.
      if (!isNoScript(recorded[0])) throw recorded[0];
      await recordAlone();
    }
    return 'accepted';
  }

  /**
   * Hands out `job` (taken by BullMQ, locked with `lockToken`) if it is its user's turn, holding
   * the user; else parks it and takes the next (`#parkAndTake`). A job accepted without order is
   * handed out as it is. Undefined when every job due was parked. `parked`: the job parked right
   * before this take, which the same script checks again (`#wakeIfTurn`).
   */
  async #takeInTurn(
    job: Job<AlertJobData>,
    options: TakeOptions,
    lockToken: string,
    parked?: { id: string; order: UserOrderKey },
  ): Promise<AlertRecord<'taken'> | undefined> {
    const { order } = job.data;
    if (order === undefined) {
      if (parked !== undefined) await this.#wakeIfTurn(parked);
      return this.#handOut(job, options, lockToken);
    }
    const { redis } = this.#consume();
    const taken = { id: String(job.id), order };
    const answer = await this.#order.turn(redis, this.#jobKeyPrefix, undefined, taken, parked);
    const woken = answer.again && parked !== undefined ? this.#promote(parked.id) : undefined;
    try {
      if (answer.turn !== undefined)
        return await this.#handOut(job, options, lockToken, answer.turn);
      return await this.#parkAndTake(job, order, options, lockToken);
    } finally {
      await woken;
    }
  }

  /**
   * Parks `job`, not its user's turn: BullMQ's delayed set for at most `leaseMs` (the alert that
   * holds the user promotes it when it ends; the bound covers a lost promote), with a take of the
   * next job in the same round trip (`moveToDelayed`'s `fetchNext`), which `#takeInTurn` hands
   * out in its turn or parks in turn.
   */
  async #parkAndTake(
    job: Job<AlertJobData>,
    order: UserOrderKey,
    options: TakeOptions,
    lockToken: string,
  ): Promise<AlertRecord<'taken'> | undefined> {
    const { worker } = this.#consume();
    const id = String(job.id);
    const result = await worker
      .getBackend()
      .moveToDelayed(id, Date.now(), this.#options.leaseMs, lockToken, {
        skipAttempt: true,
        fetchNext: !this.#stopped,
      });
    // The holder may have ended between the decision and the move, and its promote come too
    // soon: checked again with the next take, or on its own.
    const parked = { id, order };
    const fetched = fetchedJob(result);
    if (fetched === undefined) {
      await this.#wakeIfTurn(parked);
      return undefined;
    }
    const next = Job.fromJSON<AlertJobData>(worker, fetched.json, fetched.id);
    return this.#takeInTurn(next, options, lockToken, parked);
  }

  /** Promotes a job just parked if it is its user's turn by now (else its bound wakes it). */
  async #wakeIfTurn(parked: { id: string; order: UserOrderKey }): Promise<void> {
    try {
      if (await this.#order.turnAfterPark(this.#consume().redis, parked.id, parked.order)) {
        await this.#promote(parked.id);
      }
    } catch {
      // Its park's bound wakes it.
    }
  }

  /**
   * After BullMQ moved the lease's alert to completed or failed: its end in its user's order (an
   * alert accepted in order), and the promote of the user's next alert when it is parked.
   */
  async #ended(lease: Lease): Promise<void> {
    const { order } = lease.data;
    if (order === undefined) return;
    const ended = { id: String(lease.job.id), order, parked: lease.parked ?? true };
    try {
      const { redis } = this.#consume();
      const { wake } = await this.#order.turn(redis, this.#jobKeyPrefix, ended, undefined);
      if (wake !== undefined) await this.#promote(wake);
    } catch {
      // The verdict is written: a take finds the user's holder finished and drops it, and the
      // user's parked alerts come back within their bound.
    }
  }

  /** Moves a parked job back to wait (BullMQ's promote); nothing when it is not delayed any more. */
  async #promote(jobId: string): Promise<void> {
    try {
      await this.#consume().worker.getBackend().promote(jobId);
    } catch {
      // Taken, or promoted by another process meanwhile; else its park's bound wakes it.
    }
  }

  /** A completion refused (its lease was lost): a take all the same, at once (none once stopping). */
  async #takeAfterRefusal(next: TakeOptions): Promise<Completion> {
    if (this.#stopped) return { completed: false, next: undefined };
    const job = (await this.#consume().worker.getNextJob(next.token, { block: false })) as
      Job<AlertJobData> | undefined;
    if (job === undefined) return { completed: false, next: undefined };
    return {
      completed: false,
      next:
        next.perUser === true
          ? await this.#takeInTurn(job, next, next.token)
          : await this.#handOut(job, next),
    };
  }

  /** Records the lease of a job just taken and hands it out, leased for `leaseMs`. */
  async #handOut(
    job: Job<AlertJobData>,
    options: TakeOptions,
    lockToken = options.token,
    turn?: Turn,
  ): Promise<AlertRecord<'taken'>> {
    if (options.leaseMs !== this.#options.leaseMs) {
      await job.extendLock(lockToken, options.leaseMs); // BullMQ locked it for our leaseMs
    }
    return this.#record(job, options.token, lockToken, turn);
  }

  /**
   * Records the lease of a job just taken, locked for `leaseMs`, and hands it out; `turn`: taken
   * in order per user (its parks, and its user's newest time).
   */
  #record(
    job: Job<AlertJobData>,
    token: string,
    lockToken: string,
    turn?: Turn,
    streak = 1,
  ): AlertRecord<'taken'> {
    const id = String(job.id);
    const data = job.data;
    this.#leases.set(
      id,
      turn === undefined
        ? { job, token, lockToken, data }
        : { job, token, lockToken, data, parked: turn.parks > 0, more: turn.more, streak },
    );
    const { id: alertId, alert, receivedAt, traceContext } = data;
    return {
      id: alertId,
      alert,
      receivedAt,
      ...(traceContext === undefined ? {} : { traceContext }),
      jobId: id,
      tries: data.tries,
      succeeded: data.succeeded,
      stalls: data.stalls,
      // Every take starts an attempt (BullMQ's attemptsStarted). Each earlier attempt ended with
      // a verdict core wrote (tries), was a stall core recorded (stalls) or was parked, not its
      // user's turn (parks); one more means the previous taker lost its lease without any: it
      // died or froze, and this is a takeover. An alert that a completion went on with
      // (`CONTINUE`) counts from `startsBefore`, the attempts its job started before it.
      lapsed:
        job.attemptsStarted - 1 - (data.startsBefore ?? 0) - (turn?.parks ?? 0) >
        data.tries + data.stalls,
      ...(turn === undefined ? {} : { newest: turn.newest }),
    };
  }

  /**
   * The lease `token` holds alert `id` by, as far as this instance knows; undefined when this
   * instance handed the alert out under another token (a stale one). An alert this instance did
   * not hand out is fetched, and BullMQ's lock decides.
   */
  async #lease(id: string, token: string): Promise<Lease | undefined> {
    const known = this.#leases.get(id);
    if (known !== undefined) return known.token === token ? known : undefined;
    const job = await Job.fromId<AlertJobData>(this.#consume().worker, id);
    return job === undefined ? undefined : { job, token, lockToken: token, data: job.data };
  }

  /** A fenced write of `data` as the job's data; false (nothing written) once the lease is lost. */
  async #writeData(lease: Lease, data: AlertJobData): Promise<boolean> {
    const { worker, redis } = this.#consume();
    const jobKey = worker.toKey(String(lease.job.id));
    if (!(await writeDataIfLeased(redis, jobKey, lease.lockToken, data))) return false;
    lease.data = data;
    return true;
  }

  /**
   * A verdict's write under the lease of `token`; false when the lease was lost (nothing
   * written). BullMQ refuses a transition whose lock is not the caller's by throwing; whether that
   * was a lost lease is then asked of BullMQ's lock itself (`extendLock` answers 0 when the token
   * does not hold it), never read from the error's text. Any other failure (Redis unreachable) is
   * thrown, and core writes the verdict again.
   */
  async #finish(
    id: string,
    token: string,
    write: (lease: Lease) => Promise<boolean>,
  ): Promise<boolean> {
    const lease = await this.#lease(id, token);
    if (lease === undefined) return false;
    try {
      const written = await write(lease);
      this.#leases.delete(id);
      return written;
    } catch (error) {
      if (await this.#lost(lease)) {
        this.#leases.delete(id);
        return false;
      }
      throw error;
    }
  }

  /** Whether the lease's token no longer holds the job's lock (false when Redis does not say). */
  async #lost(lease: Lease): Promise<boolean> {
    try {
      return (await lease.job.extendLock(lease.lockToken, this.#options.leaseMs)) === 0;
    } catch {
      return false;
    }
  }

  /**
   * BullMQ's counts, with the order per user's: a job parked (not its user's turn) is waiting, not
   * delayed, and an alert a completion went on from is completed (kept as long as its identity).
   */
  async #counts(): Promise<QueueCounts> {
    await this.bullQueue.waitUntilReady();
    const client = this.#connections.client;
    const [counts, parked, done] = await Promise.all([
      countJobs(this.bullQueue),
      client.zintercard(2, this.bullQueue.toKey('delayed'), this.#order.parkedKey),
      client.zcount(this.#order.doneKey, Date.now() - this.#options.dedupeTtlMs, '+inf'),
    ]);
    return {
      ...counts,
      waiting: counts.waiting + parked,
      delayed: counts.delayed - parked,
      completed: counts.completed + done,
    };
  }

  /**
   * Puts the failed jobs of `failures` back, due now, each in one atomic step (retry-failed.ts):
   * core's tries and stalls set to 0 (the handlers that succeeded stay recorded) and BullMQ's
   * attempt counts reset (so the next take is not a takeover), only while the job is still in
   * that failure. Resolves with the ids put back; one no longer failed is skipped.
   */
  async #retryJobs(failures: readonly Failure[]): Promise<string[]> {
    await this.bullQueue.waitUntilReady();
    return retryFailedJobs(this.bullQueue, this.#connections.client, failures, (user) =>
      this.#order.lineKey(user),
    );
  }
}

/**
 * The Redis `AlertStore` on BullMQ's public API, with the store's options of
 * `createRedisQueue` (which runs it under core's `createDurableQueue`). Use it directly with
 * `storeContract`. An unknown option, or one only `createRedisQueue` applies, is a `TypeError`.
 *
 * @example
 * storeContract({ describe, it }, {
 *   name: 'redis',
 *   leaseMs: 300,
 *   create: (scope) => createRedisStore({ connection: url, prefix: scope, leaseMs: 300 }),
 *   unreachable: () => createRedisStore({ connection: 'redis://127.0.0.1:1' }),
 * });
 */
export function createRedisStore(options: RedisStoreOptions): RedisAlertStore {
  return new BullMqAlertStore(resolveRedisStoreOptions(options));
}
