import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { createWorkQueue, type Job } from './work-queue.js';

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A job around `work`; `finished` resolves once the queue has called the job's `finished()`. */
function job(work: () => unknown): Job & { finished(): void; settled: Promise<void> } {
  let resolve!: () => void;
  const settled = new Promise<void>((r) => (resolve = r));
  return { run: work, finished: () => resolve(), ready: false, startWhenReady: false, settled };
}

/** Pushes a job around `work`: its `settled` promise, or undefined when the queue refused it. */
function push(
  queue: ReturnType<typeof createWorkQueue>,
  work: () => unknown,
): Promise<void> | undefined {
  const pushed = job(work);
  return queue.tryPush(pushed) ? pushed.settled : undefined;
}

describe('createWorkQueue', () => {
  it('runs at most `concurrency` tasks, in arrival order, and refuses beyond maxQueue', async () => {
    const queue = createWorkQueue(2, 2);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    let peak = 0;
    const pushed = gates.map((g, i) =>
      push(queue, async () => {
        started.push(i);
        peak = Math.max(peak, queue.running);
        await g.promise;
      }),
    );
    expect(pushed.map((p) => p !== undefined)).toEqual([true, true, true, true, false]);
    // Slots are taken at once; the tasks themselves start on a later turn of the event loop.
    expect(started).toEqual([]);
    expect([queue.running, queue.queued]).toEqual([2, 2]);
    await nextTurn();
    expect(started).toEqual([0, 1]);
    gates[1]!.open();
    await pushed[1];
    await nextTurn();
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.open();
    await Promise.all(pushed.filter((p) => p !== undefined));
    expect(started).toEqual([0, 1, 2, 3]);
    expect(peak).toBe(2);
    expect([queue.running, queue.queued]).toEqual([0, 0]);
  });

  it('treats a throwing or rejecting task as finished and keeps going', async () => {
    const queue = createWorkQueue(1, 10);
    const ran: string[] = [];
    const first = push(queue, () => {
      throw new Error('sync');
    });
    const second = push(queue, () => Promise.reject(new Error('async')));
    const third = push(queue, async () => {
      ran.push('third');
    });
    await Promise.all([first, second, third]);
    expect(ran).toEqual(['third']);
    await queue.idle();
  });

  it('idle resolves when nothing is queued or running', async () => {
    const queue = createWorkQueue(1, 1);
    await queue.idle();
    const g = gate();
    void push(queue, () => g.promise);
    let idle = false;
    const waiting = queue.idle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(false);
    g.open();
    await waiting;
    expect(idle).toBe(true);
  });

  it('still runs tasks where setImmediate is a stub that throws (the Next.js edge runtime)', async () => {
    vi.resetModules();
    let stubCalls = 0;
    vi.stubGlobal('setImmediate', () => {
      stubCalls++;
      throw new Error(
        'A Node.js API is used (setImmediate) which is not supported in the Edge Runtime.',
      );
    });
    try {
      const { createWorkQueue: createEdgeQueue } = await import('./work-queue.js');
      const queue = createEdgeQueue(1, 10);
      const ran: number[] = [];
      const done = [1, 2, 3].map((n) =>
        push(queue, async () => {
          ran.push(n);
        }),
      );
      await Promise.all(done.filter((p) => p !== undefined));
      expect(done.every((p) => p !== undefined)).toBe(true);
      expect(ran).toEqual([1, 2, 3]);
      expect(stubCalls).toBe(1); // tried once, then setTimeout from then on
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
  });

  it('forgets an idle() wait whose signal aborted, and a drain that timed out keeps nothing', async () => {
    const { waitForQueue } = await import('./drain.js');
    const queue = createWorkQueue(1, 1);
    const hold = gate();
    const done = push(queue, () => hold.promise);
    const stop = new AbortController();
    void queue.idle(stop.signal);
    const kept = queue.idle();
    expect(queue.idleWaiters).toBe(2);
    stop.abort();
    expect(queue.idleWaiters).toBe(1);
    await expect(waitForQueue(queue, (signal) => queue.idle(signal), 0)).rejects.toThrow(
      /did not drain within 0 ms/,
    );
    expect(queue.idleWaiters).toBe(1);
    hold.open();
    await done;
    await kept;
    expect(queue.idleWaiters).toBe(0);
  });

  it('keeps arrival order over thousands of queued tasks, and never runs one in the turn it was pushed', async () => {
    const queue = createWorkQueue(1, 5000);
    const order: number[] = [];
    const hold = gate();
    const first = push(queue, () => hold.promise);
    await nextTurn();
    const pushed = Array.from({ length: 3000 }, (_, i) =>
      push(queue, async () => {
        order.push(i);
      }),
    );
    // Free the slot in the same turn as the pushes: the queued tasks must still wait a turn.
    hold.open();
    await first;
    expect(order).toEqual([]);
    await Promise.all(pushed.filter((p) => p !== undefined));
    expect(order).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    expect([queue.running, queue.queued]).toEqual([0, 0]);
  });

  it('runs jobs that finish synchronously one after another without a promise, and without deep recursion', async () => {
    const queue = createWorkQueue(1, 50_000);
    const order: number[] = [];
    const finishedInTurn: number[] = [];
    const jobs = Array.from({ length: 20_000 }, (_, i) => {
      const j = job(() => {
        order.push(i);
      });
      const finished = j.finished;
      j.finished = () => {
        finishedInTurn.push(i);
        finished();
      };
      return j;
    });
    for (const j of jobs) expect(queue.tryPush(j)).toBe(true);
    expect([queue.running, queue.queued]).toEqual([1, 19_999]);
    await nextTurn();
    // All ran in the one turn after the pushes, in order, each finished before the next started.
    expect(order).toHaveLength(20_000);
    expect(order).toEqual(finishedInTurn);
    expect(order.every((n, i) => n === i)).toBe(true);
    expect([queue.running, queue.queued]).toEqual([0, 0]);
    await queue.idle();
  });

  it('treats a returned thenable whose then() throws as a failed job and keeps going', async () => {
    const queue = createWorkQueue(1, 10);
    const broken = {
      then: () => {
        throw new Error('broken thenable');
      },
    };
    const first = push(queue, () => broken);
    const ran: string[] = [];
    const second = push(queue, () => {
      ran.push('second');
    });
    await first;
    await second;
    expect(ran).toEqual(['second']);
    expect([queue.running, queue.queued]).toEqual([0, 0]);
  });

  it('keeps a slot taken while a returned thenable is pending, and frees it when it rejects', async () => {
    const queue = createWorkQueue(1, 10);
    let reject!: (error: Error) => void;
    const thenable = {
      then: (_: unknown, onRejected: (error: Error) => void) => (reject = onRejected),
    };
    const first = push(queue, () => thenable);
    const ran: string[] = [];
    const second = push(queue, () => {
      ran.push('second');
    });
    await nextTurn();
    expect([queue.running, queue.queued, ran.length]).toEqual([1, 1, 0]);
    reject(new Error('failed'));
    await first;
    await second;
    expect(ran).toEqual(['second']);
    expect([queue.running, queue.queued]).toEqual([0, 0]);
  });

  it('runs an own-turn job at once on a slot of its own, and starts waiting jobs only below concurrency', async () => {
    const queue = createWorkQueue(1, 10);
    const order: string[] = [];
    const first = gate();
    const own = gate();
    const a = push(queue, async () => {
      order.push('a');
      await first.promise;
    });
    const b = push(queue, () => {
      order.push('b');
    });
    const ownJob = job(async () => {
      order.push('own');
      await own.promise;
    });
    // The slot is taken and `b` waits; the own-turn job does not wait behind them.
    expect(queue.tryPush(ownJob, true)).toBe(true);
    expect([queue.running, queue.queued]).toEqual([2, 1]);
    expect(order).toEqual([]); // not in the pushing turn
    await nextTurn();
    expect(order).toEqual(['a', 'own']);
    // `own` finishing while `a` still holds the only slot starts nothing.
    own.open();
    await ownJob.settled;
    await nextTurn();
    expect(order).toEqual(['a', 'own']);
    expect([queue.running, queue.queued]).toEqual([1, 1]);
    first.open();
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'own', 'b']);
    expect([queue.running, queue.queued]).toEqual([0, 0]);
  });

  it('refuses an own-turn job once concurrency + maxQueue jobs are running or waiting', () => {
    const queue = createWorkQueue(1, 1);
    const hold = gate();
    expect(
      queue.tryPush(
        job(() => hold.promise),
        true,
      ),
    ).toBe(true);
    expect(
      queue.tryPush(
        job(() => hold.promise),
        true,
      ),
    ).toBe(true);
    expect(
      queue.tryPush(
        job(() => hold.promise),
        true,
      ),
    ).toBe(false);
    expect(queue.running).toBe(2);
    hold.open();
  });

  it('keeps no reference to a job that waited for a slot once it has been taken', async () => {
    // A full collection on demand (vitest does not start Node with --expose-gc).
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const queue = createWorkQueue(1, 100);
    const hold = gate();
    const first = push(queue, () => hold.promise); // takes the only slot: the jobs below wait in the queue
    const refs: WeakRef<object>[] = [];
    const settled: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      const payload = { alert: `alert_${i}` };
      refs.push(new WeakRef(payload));
      settled.push(push(queue, () => payload.alert.length) as Promise<void>);
    }
    await nextTurn();
    expect(queue.queued).toBe(20);
    hold.open();
    await Promise.all([first, ...settled]);
    expect(queue.queued).toBe(0);
    settled.length = 0;
    await nextTurn();
    collect();
    // Each taken job (and what it holds: an alert, a promise) is free to go once it has run.
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  });
});
