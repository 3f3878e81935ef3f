import { isPromiseLike } from './maybe-promise.js';
/**
 * A unit of work for the queue. The two flags belong to the queue (a job starts with both false);
 * keeping them on the job spares the queue an object per job.
 */
export interface Job {
  /**
   * Does the work. A returned promise (any thenable) keeps the job running until it settles,
   * fulfilled or rejected; any other value, or a throw, means the job has finished.
   */
  run(): unknown;
  /** Called once, when the job has finished. It must not throw. */
  finished(): void;
  /** Set by the queue: true from the turn of the event loop after the push on. */
  ready: boolean;
  /** Set by the queue: a slot was given to the job before it was ready; run it when it is. */
  startWhenReady: boolean;
}

/** A bounded queue that runs at most `concurrency` jobs at once. */
export interface WorkQueue {
  /**
   * Starts the job on a later turn of the event loop, or queues it. Returns `false` when
   * `maxQueue` jobs are already waiting (nothing is queued then). `ownTurn`: the job never waits
   * for a slot and is started by a deferral of its own, made now, so that it runs in the caller's
   * context (a workerd request); it may take a slot beyond `concurrency`, and is refused once
   * `concurrency + maxQueue` jobs are running or waiting.
   */
  tryPush(job: Job, ownTurn?: boolean): boolean;
  /**
   * Resolves when nothing is queued or running. An aborted `signal` stops the wait (the promise
   * then never settles and nothing is kept for it).
   */
  idle(signal?: AbortSignal): Promise<void>;
  readonly queued: number;
  readonly running: number;
  /** Pending `idle()` waits, for tests. */
  readonly idleWaiters: number;
}

// Captured at load: the deferral below is a scheduling detail, not a timer that a test's fake
// clock (vi.useFakeTimers and the like) should hold back. Edge runtimes may define `setImmediate`
// as a stub that throws (Next.js does): there, and wherever it throws, setTimeout is used.
// Read in functions marked free of side effects, so that a bundle without the in-memory queue
// (`createQueueReceiver`) drops them with the rest of this file.
function loadSetImmediate(): ((fn: () => void) => unknown) | undefined {
  const isEdgeRuntime = typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string';
  return !isEdgeRuntime && typeof globalThis.setImmediate === 'function'
    ? globalThis.setImmediate
    : undefined;
}
const loadSetTimeout = (): typeof setTimeout => globalThis.setTimeout;
let realSetImmediate = /* @__PURE__ */ loadSetImmediate();
const realSetTimeout = /* @__PURE__ */ loadSetTimeout();

/**
 * Runs `fn` on a later turn of the event loop, after the current I/O: in async mode the answer is
 * written before any handler code runs, even a handler that starts with synchronous work.
 */
function later(fn: () => void): void {
  if (realSetImmediate !== undefined) {
    try {
      realSetImmediate(fn);
      return;
    } catch {
      realSetImmediate = undefined; // a throwing stub: use setTimeout from now on
    }
  }
  realSetTimeout(fn, 0);
}

/**
 * Creates a bounded work queue. No job runs in the turn of the event loop that pushed it (in async
 * mode the answer is written first, even before a handler's synchronous start); after that, a slot
 * that frees up starts the next waiting job at once, so a busy queue drains without delay. A job
 * that finishes synchronously costs no promise at all.
 */
export function createWorkQueue(concurrency: number, maxQueue: number): WorkQueue {
  // A FIFO as an array and a head index: shift() would copy up to maxQueue entries each time. A
  // taken entry is cleared at once: the array lives long (old space), and a job it still pointed
  // to would keep its alert and promise alive, through scavenges and into old space, until the
  // next compaction of the array.
  let waiting: (Job | undefined)[] = [];
  let head = 0;
  let running = 0;
  let idleWaiters: (() => void)[] = [];
  // Jobs pushed during the current turn: one deferral marks them all ready on the next turn.
  let fresh: Job[] = [];

  function markFreshReady(): void {
    const jobs = fresh;
    fresh = [];
    for (const job of jobs) job.ready = true;
    for (const job of jobs) if (job.startWhenReady) execute(job);
  }

  const queued = (): number => waiting.length - head;

  function takeNext(): Job | undefined {
    if (head >= waiting.length) return undefined;
    const next = waiting[head];
    waiting[head++] = undefined;
    if (head > 1024 && head * 2 > waiting.length) {
      waiting = waiting.slice(head);
      head = 0;
    }
    return next;
  }

  function settleIdle(): void {
    if (running > 0 || queued() > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Gives `job` a slot; returns it when it may run now, or marks it to run once it is ready. */
  function claimSlot(job: Job): Job | undefined {
    running++;
    if (job.ready) return job;
    job.startWhenReady = true;
    return undefined;
  }

  /** Frees the slot of a finished job; returns the next job to run now, if any. */
  function release(job: Job): Job | undefined {
    running--;
    job.finished();
    // Own-turn jobs may hold slots beyond `concurrency`: a waiting job starts only below it.
    const next = running < concurrency ? takeNext() : undefined;
    if (next !== undefined) return claimSlot(next);
    settleIdle();
    return undefined;
  }

  /**
   * Runs `first`, and while jobs finish synchronously, the next ones in a loop (not by recursion,
   * so thousands of synchronous jobs queued behind each other cannot overflow the stack).
   */
  function execute(first: Job): void {
    let job: Job | undefined = first;
    while (job !== undefined) {
      let result: unknown;
      try {
        result = job.run();
      } catch {
        result = undefined; // a throwing job has finished
      }
      if (isPromiseLike(result)) {
        const pending = job;
        const settled = (): void => {
          const next = release(pending);
          if (next !== undefined) execute(next);
        };
        // Adopted, not called: a thenable whose `then` throws cannot throw out of here.
        Promise.resolve(result).then(settled, settled);
        return;
      }
      job = release(job);
    }
  }

  return {
    tryPush(job, ownTurn = false) {
      if (running >= concurrency && queued() >= maxQueue) return false;
      if (ownTurn) {
        // Never waits, but counts against the same bound: `concurrency + maxQueue` in all.
        if (running + queued() >= concurrency + maxQueue) return false;
        running++;
        job.ready = false;
        job.startWhenReady = true;
        later(() => {
          job.ready = true;
          execute(job);
        });
        return true;
      }
      job.ready = false;
      job.startWhenReady = false;
      if (fresh.push(job) === 1) later(markFreshReady);
      if (running < concurrency) claimSlot(job);
      else waiting.push(job);
      return true;
    },
    idle(signal) {
      if (running === 0 && queued() === 0) return Promise.resolve();
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        signal?.addEventListener(
          'abort',
          () => {
            idleWaiters = idleWaiters.filter((waiter) => waiter !== resolve);
          },
          { once: true },
        );
      });
    },
    get idleWaiters() {
      return idleWaiters.length;
    },
    get queued() {
      return queued();
    },
    get running() {
      return running;
    },
  };
}
