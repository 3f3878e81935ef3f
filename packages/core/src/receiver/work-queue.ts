/** A unit of work; it must not reject (the queue treats a rejection as finished work). */
export type Task = () => Promise<void>;

/** A bounded queue that runs at most `concurrency` tasks at once. */
export interface WorkQueue {
  /**
   * Starts the task now or queues it. Returns a promise that resolves when the task has finished,
   * or `undefined` when `maxQueue` tasks are already waiting (nothing is queued then).
   */
  tryPush(task: Task): Promise<void> | undefined;
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

interface Entry {
  task: Task;
  resolve: () => void;
  /** True from the turn of the event loop after the push on: the answer has been written. */
  ready: boolean;
  /** A slot was given to it before it was ready: run it as soon as it is. */
  startWhenReady: boolean;
}

// Captured at load: the deferral below is a scheduling detail, not a timer that a test's fake
// clock (vi.useFakeTimers and the like) should hold back. Edge runtimes may define `setImmediate`
// as a stub that throws (Next.js does): there, and wherever it throws, setTimeout is used.
const isEdgeRuntime = typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string';
let realSetImmediate: ((fn: () => void) => unknown) | undefined =
  !isEdgeRuntime && typeof globalThis.setImmediate === 'function'
    ? globalThis.setImmediate
    : undefined;
const realSetTimeout = globalThis.setTimeout;

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
 * Creates a bounded work queue. No task runs in the turn of the event loop that pushed it (in async
 * mode the answer is written first, even before a handler's synchronous start); after that, a slot
 * that frees up starts the next waiting task at once, so a busy queue drains without delay.
 */
export function createWorkQueue(concurrency: number, maxQueue: number): WorkQueue {
  // A FIFO as an array and a head index: shift() would copy up to maxQueue entries each time.
  let waiting: Entry[] = [];
  let head = 0;
  let running = 0;
  let idleWaiters: (() => void)[] = [];
  // Entries pushed during the current turn: one deferral marks them all ready on the next turn.
  let fresh: Entry[] = [];

  function markFreshReady(): void {
    const entries = fresh;
    fresh = [];
    for (const entry of entries) {
      entry.ready = true;
      if (entry.startWhenReady) run(entry);
    }
  }

  const queued = (): number => waiting.length - head;

  function takeNext(): Entry | undefined {
    if (head >= waiting.length) return undefined;
    const next = waiting[head++];
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

  function start(entry: Entry): void {
    running++;
    if (entry.ready) run(entry);
    else entry.startWhenReady = true;
  }

  function run(entry: Entry): void {
    const finish = (): void => {
      running--;
      entry.resolve();
      const next = takeNext();
      if (next !== undefined) start(next);
      else settleIdle();
    };
    let promise: Promise<void>;
    try {
      promise = entry.task();
    } catch {
      promise = Promise.resolve();
    }
    promise.then(finish, finish);
  }

  return {
    tryPush(task) {
      if (running >= concurrency && queued() >= maxQueue) return undefined;
      return new Promise<void>((resolve) => {
        const entry: Entry = { task, resolve, ready: false, startWhenReady: false };
        if (fresh.push(entry) === 1) later(markFreshReady);
        if (running < concurrency) start(entry);
        else waiting.push(entry);
      });
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
