import { refuseUnknownOptions } from '../../options/known-options.js';
import type { AlertRecord, QueueHealth } from '../../queue-port/alert-queue.js';
import {
  resolveFailedListOptions,
  type AlertStore,
  type AlertVerdict,
  type FailedListOptions,
  type QueueCounts,
  type StoreAcceptOptions,
  type TakeOptions,
} from './alert-store.js';

/** Options of `createMemoryStore`. */
export interface MemoryStoreOptions {
  /** Clock in milliseconds, like `Date.now` (for tests). */
  now?: () => number;
  /**
   * Whether the store answers (for tests of an outage): while it returns false, every call
   * rejects and `health()` reports the store unreachable. Default: always available.
   */
  available?: () => boolean;
}

type State = 'waiting' | 'active' | 'failed' | 'completed';

interface Job {
  readonly id: string;
  readonly entry: AlertRecord<'accepted'>;
  state: State;
  tries: number;
  succeeded: readonly string[];
  stalls: number;
  /** Put back by `reclaimExpired` after its taker's lease ran out, and no write of core's since. */
  lapsed: boolean;
  /** Due time (waiting), or lease end (active), in ms. */
  at: number;
  token: string | undefined;
  error: string | undefined;
  finishedAt: number | undefined;
  /** The order of the finishes: breaks a tie of `finishedAt` (two within a millisecond). */
  finishes: number;
  /** The order of acceptance: breaks a tie of `orderAt` in order per user. */
  readonly sequence: number;
  /** In order per user: the alert's user and time (`StoreAcceptOptions.order`). */
  readonly user: string | undefined;
  readonly orderAt: number;
}

class MemoryAlertStore implements AlertStore {
  readonly kind = 'memory';
  readonly #now: () => number;
  readonly #available: () => boolean;
  /** Jobs by id, in the order they were accepted (the take order of jobs due at once). */
  readonly #jobs = new Map<string, Job>();
  /** Ids of jobs accepted with `first`, newest last: taken before the others, newest first. */
  readonly #first: string[] = [];
  /** Alert identity → [job id, expiry]. */
  readonly #identities = new Map<string, { jobId: string; until: number }>();
  #sequence = 0;
  #finishes = 0;
  /** In order per user: each user's alerts not finished (waiting, delayed or active). */
  readonly #lines = new Map<string, Set<Job>>();
  /** In order per user: the job that holds each held user. */
  readonly #holders = new Map<string, Job>();
  /** In order per user: the newest time accepted per user, and until when it is kept. */
  readonly #newest = new Map<string, { at: number; until: number }>();

  constructor(options: MemoryStoreOptions) {
    this.#now = options.now ?? Date.now;
    this.#available = options.available ?? (() => true);
  }

  /** Rejects like a store that does not answer, while `available()` is false. */
  #check(): Promise<void> {
    return this.#available()
      ? Promise.resolve()
      : Promise.reject(new Error('The memory store is unavailable.'));
  }

  /** The job `token` leases now, or undefined. */
  #leased(id: string, token: string): Job | undefined {
    const job = this.#jobs.get(id);
    if (job?.state !== 'active' || job.token !== token || job.at <= this.#now()) return undefined;
    return job;
  }

  async accept(
    entry: AlertRecord<'accepted'>,
    options: StoreAcceptOptions,
  ): Promise<'accepted' | 'duplicate'> {
    await this.#check();
    const now = this.#now();
    const held = this.#identities.get(entry.id);
    if (held !== undefined && held.until > now) return 'duplicate';
    const sequence = ++this.#sequence;
    const id = `m${String(sequence)}`;
    this.#identities.set(entry.id, { jobId: id, until: now + options.dedupeTtlMs });
    const { order } = options;
    const job: Job = {
      id,
      sequence,
      user: order?.user,
      orderAt: order?.at ?? 0,
      entry,
      state: 'waiting',
      tries: 0,
      succeeded: [],
      stalls: 0,
      lapsed: false,
      at: now,
      token: undefined,
      error: undefined,
      finishedAt: undefined,
      finishes: 0,
    };
    this.#jobs.set(id, job);
    if (order !== undefined) {
      const newest = this.#newest.get(order.user);
      const at =
        newest !== undefined && newest.until > now ? Math.max(newest.at, order.at) : order.at;
      this.#newest.set(order.user, { at, until: now + options.dedupeTtlMs });
      this.#line(order.user).add(job);
    }
    if (options.first === true) this.#first.push(id);
    return 'accepted';
  }

  async take(options: TakeOptions): Promise<AlertRecord<'taken'> | undefined> {
    await this.#check();
    return this.#take(options);
  }

  #take(options: TakeOptions): AlertRecord<'taken'> | undefined {
    const now = this.#now();
    // An id here whose job is taken or gone meanwhile is dropped: a retry of it takes its turn.
    for (let first = this.#first.pop(); first !== undefined; first = this.#first.pop()) {
      const job = this.#jobs.get(first);
      if (job?.state === 'waiting' && job.at <= now && this.#inTurn(job, options)) {
        return this.#lease(job, options, now);
      }
    }
    for (const job of this.#jobs.values()) {
      if (job.state === 'waiting' && job.at <= now && this.#inTurn(job, options)) {
        return this.#lease(job, options, now);
      }
    }
    return undefined;
  }

  /**
   * Whether a due job may be taken: always, unless the take is in order per user; then only the
   * job that holds its user, or, for a user not held, the oldest of the user's waiting jobs.
   */
  #inTurn(job: Job, options: TakeOptions): boolean {
    if (options.perUser !== true || job.user === undefined) return true;
    const holder = this.#holders.get(job.user);
    if (holder !== undefined) return holder === job;
    for (const other of this.#line(job.user)) {
      if (other.state !== 'waiting' || other === job) continue;
      if (other.orderAt < job.orderAt) return false;
      if (other.orderAt === job.orderAt && other.sequence < job.sequence) return false;
    }
    return true;
  }

  #lease(job: Job, options: TakeOptions, now: number): AlertRecord<'taken'> {
    job.state = 'active';
    job.token = options.token;
    job.at = now + options.leaseMs;
    const { id: jobId, entry, tries, succeeded, stalls, lapsed, user } = job;
    const taken = { ...entry, jobId, tries, succeeded, stalls, lapsed };
    if (options.perUser !== true || user === undefined) return taken;
    this.#holders.set(user, job);
    const newest = this.#newest.get(user);
    const at = newest !== undefined && newest.until > now ? newest.at : job.orderAt;
    return { ...taken, newest: Math.max(at, job.orderAt) };
  }

  /** The user's alerts not finished. */
  #line(user: string): Set<Job> {
    let line = this.#lines.get(user);
    if (line === undefined) {
      line = new Set();
      this.#lines.set(user, line);
    }
    return line;
  }

  async extend(id: string, token: string, leaseMs: number, stalls?: number): Promise<boolean> {
    await this.#check();
    const job = this.#leased(id, token);
    if (job === undefined) return false;
    job.at = this.#now() + leaseMs;
    if (stalls !== undefined) {
      job.stalls = stalls;
      job.lapsed = false;
    }
    return true;
  }

  async complete(id: string, token: string): Promise<boolean> {
    await this.#check();
    return this.#complete(id, token);
  }

  async completeAndTake(
    id: string,
    token: string,
    next: TakeOptions,
  ): ReturnType<AlertStore['completeAndTake']> {
    await this.#check();
    const completed = this.#complete(id, token);
    return { completed, next: this.#take(next) };
  }

  #complete(id: string, token: string): boolean {
    const job = this.#leased(id, token);
    if (job === undefined) return false;
    this.#finish(job, 'completed');
    return true;
  }

  async scheduleRetry(
    id: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'retry' }>,
  ): Promise<boolean> {
    await this.#check();
    const job = this.#leased(id, token);
    if (job === undefined) return false;
    job.state = 'waiting';
    job.token = undefined;
    job.lapsed = false;
    job.tries = verdict.tries;
    job.succeeded = [...verdict.succeeded];
    job.error = verdict.error.message;
    job.at = this.#now() + verdict.delayMs;
    return true;
  }

  async fail(
    id: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'failed' }>,
  ): Promise<boolean> {
    await this.#check();
    const job = this.#leased(id, token);
    if (job === undefined) return false;
    job.lapsed = false;
    job.tries = verdict.tries;
    job.succeeded = [...verdict.succeeded];
    job.error = verdict.error.message;
    this.#finish(job, 'failed');
    return true;
  }

  async reclaimExpired(): Promise<number> {
    await this.#check();
    const now = this.#now();
    let reclaimed = 0;
    for (const job of this.#jobs.values()) {
      if (job.state !== 'active' || job.at > now) continue;
      job.state = 'waiting';
      job.token = undefined;
      job.lapsed = true;
      job.at = now;
      reclaimed++;
    }
    return reclaimed;
  }

  async failed(options: FailedListOptions = {}): Promise<AlertRecord<'failed'>[]> {
    const { limit, offset } = resolveFailedListOptions(options);
    await this.#check();
    return [...this.#jobs.values()]
      .filter((job) => job.state === 'failed')
      .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0) || b.finishes - a.finishes)
      .slice(offset, offset + limit)
      .map((job) => ({
        ...job.entry,
        jobId: job.id,
        tries: job.tries,
        succeeded: [...job.succeeded],
        error: job.error ?? '',
        failedAt: job.finishedAt,
      }));
  }

  async retry(id: string): Promise<void> {
    await this.#check();
    const job = this.#jobs.get(id) ?? this.#jobOfIdentity(id);
    if (job?.state !== 'failed') throw new TypeError(`No failed alert with id "${id}".`);
    this.#putBack(job);
  }

  async retryAll(): Promise<number> {
    await this.#check();
    const snapshot = [...this.#jobs.values()].filter((job) => job.state === 'failed');
    for (const job of snapshot) this.#putBack(job);
    return snapshot.length;
  }

  async counts(): Promise<QueueCounts> {
    await this.#check();
    const now = this.#now();
    const counts: QueueCounts = { waiting: 0, active: 0, delayed: 0, failed: 0, completed: 0 };
    for (const job of this.#jobs.values()) {
      if (job.state === 'waiting') {
        if (job.at > now) counts.delayed++;
        else counts.waiting++;
      } else counts[job.state]++;
    }
    return counts;
  }

  health(): Promise<QueueHealth> {
    return Promise.resolve(
      this.#available()
        ? { reachable: true }
        : { reachable: false, error: 'The memory store is unavailable.' },
    );
  }

  async nextDueInMs(): Promise<number | undefined> {
    await this.#check();
    const now = this.#now();
    let soonest: number | undefined;
    for (const job of this.#jobs.values()) {
      if (job.state !== 'waiting' || job.at <= now) continue;
      soonest = Math.min(soonest ?? Infinity, job.at - now);
    }
    return soonest;
  }

  async depth(): Promise<number> {
    const counts = await this.counts();
    return counts.waiting + counts.delayed;
  }

  async close(): Promise<void> {
    // Nothing to release: the store lives as long as the objects that hold it.
  }

  #jobOfIdentity(identity: string): Job | undefined {
    const held = this.#identities.get(identity);
    return held === undefined ? undefined : this.#jobs.get(held.jobId);
  }

  #finish(job: Job, state: 'completed' | 'failed'): void {
    job.state = state;
    job.token = undefined;
    job.finishedAt = this.#now();
    job.finishes = ++this.#finishes;
    if (job.user === undefined) return;
    // The user is released; its line keeps only what is not finished.
    if (this.#holders.get(job.user) === job) this.#holders.delete(job.user);
    const line = this.#lines.get(job.user);
    line?.delete(job);
    if (line?.size === 0) this.#lines.delete(job.user);
  }

  #putBack(job: Job): void {
    job.state = 'waiting';
    job.tries = 0;
    job.stalls = 0;
    job.lapsed = false;
    job.error = undefined;
    job.finishedAt = undefined;
    job.at = this.#now();
    if (job.user !== undefined) this.#line(job.user).add(job);
  }
}

/**
 * The reference `AlertStore`, in this process's memory: what `storeContract` is proven against,
 * and a store for tests of code that runs on a durable queue (`createDurableQueue(store)`). It
 * shares nothing with other processes and survives no restart: in production use
 * `@churn-risk/redis` or `@churn-risk/postgres`.
 *
 * @example
 * const queue = createDurableQueue(createMemoryStore(), { leaseMs: 1000 });
 * const receiver = createReceiver({ secret: 'whsec_test', queue });
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): AlertStore {
  refuseUnknownOptions('createMemoryStore', options, ['now', 'available']);
  return new MemoryAlertStore(options);
}
