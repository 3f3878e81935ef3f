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

/** Creates a bounded work queue. */
export function createWorkQueue(concurrency: number, maxQueue: number): WorkQueue {
  const waiting: Entry[] = [];
  let running = 0;
  let idleWaiters: (() => void)[] = [];

  function settleIdle(): void {
    if (running > 0 || waiting.length > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function start(entry: Entry): void {
    running++; // the slot is taken now; the task itself starts on a later turn
    later(() => {
      run(entry);
    });
  }

  function run(entry: Entry): void {
    let promise: Promise<void>;
    try {
      promise = entry.task();
    } catch {
      promise = Promise.resolve();
    }
    void promise
      .catch(() => undefined)
      .then(() => {
        running--;
        entry.resolve();
        const next = waiting.shift();
        if (next !== undefined) start(next);
        else settleIdle();
      });
  }

  return {
    tryPush(task) {
      if (running >= concurrency && waiting.length >= maxQueue) return undefined;
      return new Promise<void>((resolve) => {
        const entry = { task, resolve };
        if (running < concurrency) start(entry);
        else waiting.push(entry);
      });
    },
    idle(signal) {
      if (running === 0 && waiting.length === 0) return Promise.resolve();
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
      return waiting.length;
    },
    get running() {
      return running;
    },
  };
}
