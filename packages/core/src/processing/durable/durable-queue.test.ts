import { describe, expect, it, vi } from 'vitest';
import { AlertStalledError, createReceiver, type Logger, type Receiver } from '@churn-risk/core';
import {
  createDurableQueue,
  createMemoryStore,
  type AlertStore,
  type DurableQueueOptions,
} from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';

// The durable runner over the reference store: leases, verdict writes, stalls, outages.

const SECRET = 'whsec_durable_runner';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function request(userId = `user_${Math.random().toString(36).slice(2)}`): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
  return { method: 'POST', headers, body };
}

/** A logger that keeps its lines. */
function recordingLogger(): Logger & { lines: [string, string][] } {
  const lines: [string, string][] = [];
  const at =
    (level: string) =>
    (_fields: Record<string, unknown>, message: string): void => {
      lines.push([level, message]);
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function receiverOn(
  store: AlertStore,
  options: DurableQueueOptions & { retries?: number; logger?: Logger; concurrency?: number } = {},
): Receiver {
  const { retries = 0, logger, concurrency = 10, ...queueOptions } = options;
  return createReceiver({
    secret: SECRET,
    queue: createDurableQueue(store, { pollIntervalMs: 10, ...queueOptions }),
    retries: { retries, backoffMs: () => 5 },
    concurrency,
    ...(logger === undefined ? {} : { logger }),
  });
}

/** `inner`, with some of its methods replaced (`overrides`), the others bound to it. */
function withMethods(inner: AlertStore, overrides: Partial<AlertStore>): AlertStore {
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof AlertStore];
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** `inner`, with `extend` replaced (a process whose renewals no longer reach the store). */
function withExtend(inner: AlertStore, extend: AlertStore['extend']): AlertStore {
  return withMethods(inner, { extend });
}

/** Two receivers on one store, with a lease shorter than their handler (which counts its runs). */
function slowPair(store: AlertStore): { a: Receiver; b: Receiver; runs: { count: number } } {
  const runs = { count: 0 };
  const [a, b] = [
    receiverOn(store, { leaseMs: 150, reclaimIntervalMs: 20 }),
    receiverOn(store, { leaseMs: 150, reclaimIntervalMs: 20 }),
  ];
  for (const receiver of [a, b]) {
    receiver.on('churn_risk_alert', async () => {
      runs.count++;
      await sleep(600);
    });
  }
  return { a, b, runs };
}

describe('createDurableQueue', () => {
  it('renews the lease while a handler runs longer than it: no other process takes the alert', async () => {
    const store = createMemoryStore();
    const { a, b, runs } = slowPair(store);
    expect((await a.handle(request())).status).toBe(202);
    await a.drain({ timeoutMs: 5_000 });
    await b.drain({ timeoutMs: 5_000 });
    expect(runs.count).toBe(1);
    expect(await store.counts()).toMatchObject({ completed: 1, waiting: 0, active: 0 });
    await Promise.all([a.close(), b.close()]);
  });

  it('renews the leases of several alerts running at once, taken at different times, and none after their tries', async () => {
    const { store, calls } = counting(createMemoryStore());
    const { a, b, runs } = slowPair(store);
    for (let i = 0; i < 3; i++) {
      expect((await a.handle(request())).status).toBe(202);
      await sleep(40); // each lease's renewals fall at other times
    }
    await a.drain({ timeoutMs: 5_000 });
    await b.drain({ timeoutMs: 5_000 });
    expect(runs.count).toBe(3);
    expect(await store.counts()).toMatchObject({ completed: 3, waiting: 0, active: 0 });
    const renewals = calls.get('extend') ?? 0;
    expect(renewals).toBeGreaterThanOrEqual(3);
    await sleep(300); // two lease halves: a timer left behind would renew again
    expect(calls.get('extend') ?? 0).toBe(renewals);
    await Promise.all([a.close(), b.close()]);
  });

  it('calls onError once when the lease is lost during the last try: only the write that went through reports', async () => {
    const store = createMemoryStore();
    const reported: string[] = [];
    const logger = recordingLogger();
    // A's renewals are refused (its process stalled), so B takes the alert over meanwhile. Only B
    // reclaims, and A, with one slot, takes nothing more while its try runs.
    const a = receiverOn(
      withExtend(store, () => Promise.resolve(false)),
      { leaseMs: 120, reclaimIntervalMs: 60_000, logger, concurrency: 1 },
    );
    const b = receiverOn(store, { leaseMs: 5_000, reclaimIntervalMs: 20 });
    a.on('churn_risk_alert', async () => {
      await sleep(500);
      throw new Error('A: CRM down');
    });
    a.onError((error) => void reported.push(`a: ${(error as Error).message}`));
    b.onError((error) => void reported.push(`b: ${(error as Error).message}`));
    await a.handle(request());
    await sleep(60); // A has taken it
    b.on('churn_risk_alert', () => {
      throw new Error('B: CRM down');
    });
    await a.drain({ timeoutMs: 5_000 });
    await b.drain({ timeoutMs: 5_000 });
    await sleep(100);
    expect(reported).toEqual(['b: B: CRM down']);
    expect(await store.failed()).toHaveLength(1);
    expect(
      logger.lines.some(([level, line]) => level === 'warn' && /was not stored/.test(line)),
    ).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it('fails an alert whose takers died more than maxStalls times, onError once, without running it', async () => {
    const store = createMemoryStore();
    const accepted = await store.accept(
      {
        id: 'user_poison:2026-11-01T00:00:00.000Z',
        alert: {
          event: 'churn_risk_alert',
          userId: 'user_poison',
          score: 0.9,
          tier: 'high',
          signals: [],
          recommendation: 'r',
          triggeredAt: '2026-11-01T00:00:00.000Z',
        },
        receivedAt: Date.now(),
      },
      { dedupeTtlMs: 60_000 },
    );
    expect(accepted).toBe('accepted');
    // Two takers die mid-alert; each counts the stall it found, as core's runner does. Each
    // writes its count under a long lease, then lets it end 10 ms later (a busy machine between
    // the take and the write never loses the count).
    for (let death = 0; death < 2; death++) {
      const token = `dead-${String(death)}`;
      const taken = await store.take({ token, leaseMs: 60_000 });
      if (taken === undefined) throw new Error('nothing taken');
      expect(taken.lapsed).toBe(death > 0);
      const stalls = taken.lapsed ? taken.stalls + 1 : undefined;
      expect(await store.extend(taken.jobId, token, 10, stalls)).toBe(true);
      await sleep(20);
      expect(await store.reclaimExpired?.()).toBe(1);
    }
    const receiver = receiverOn(store, { maxStalls: 1 });
    const errors: unknown[] = [];
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs++;
    });
    receiver.onError((error) => void errors.push(error));
    await receiver.drain({ timeoutMs: 5_000 });
    expect(runs).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AlertStalledError);
    const [failed] = await store.failed();
    expect(failed?.error).toMatch(/poison/);
    await receiver.close();
  });

  it('stores a verdict once the store answers again, and logs the outage once', async () => {
    let up = true;
    const store = createMemoryStore({ available: () => up });
    const logger = recordingLogger();
    const receiver = receiverOn(store, { logger });
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs++;
      up = false; // the store goes down during the try
      setTimeout(() => {
        up = true;
      }, 400);
    });
    await receiver.handle(request());
    await sleep(300);
    expect(up).toBe(false);
    await receiver.drain({ timeoutMs: 5_000 });
    expect(runs).toBe(1);
    expect(await store.counts()).toMatchObject({ completed: 1, active: 0 });
    const outages = logger.lines.filter(([, line]) => /does not answer/.test(line));
    expect(outages).toHaveLength(1);
    expect(logger.lines.some(([, line]) => /answers again/.test(line))).toBe(true);
    await receiver.close();
  });

  it('writes a verdict again when the store throws instead of rejecting', async () => {
    const inner = createMemoryStore();
    let throws = 2;
    // A store written without async: its completion throws synchronously twice, then works.
    const throwing =
      <A extends unknown[], R>(method: (...args: A) => R) =>
      (...args: A): R => {
        if (throws > 0) {
          throws--;
          throw new Error('the store threw');
        }
        return method(...args);
      };
    const store = withMethods(inner, {
      complete: throwing(inner.complete.bind(inner)),
      completeAndTake: throwing(inner.completeAndTake.bind(inner)),
    });
    const logger = recordingLogger();
    const receiver = receiverOn(store, { logger });
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs++;
    });
    await receiver.handle(request());
    await receiver.drain({ timeoutMs: 5_000 });
    expect(throws).toBe(0);
    expect(runs).toBe(1);
    expect(await inner.counts()).toMatchObject({ completed: 1, active: 0, waiting: 0 });
    expect(logger.lines.some(([, line]) => /failed unexpectedly/.test(line))).toBe(false);
    await receiver.close();
  });

  it('answers 503 OVERLOADED when the store does not record the alert within enqueueTimeoutMs', async () => {
    const store = createMemoryStore();
    const hanging = new Proxy(store, {
      get(target, key) {
        if (key === 'accept') return () => new Promise(() => undefined);
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const receiver = receiverOn(hanging, { enqueueTimeoutMs: 50 });
    const answer = await receiver.handle(request());
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'OVERLOADED' } });
    await receiver.close();
  });

  it('names the store when it refuses the write: in the log line and in health(), never in the answer', async () => {
    const store = createMemoryStore();
    const refusing = new Proxy(store, {
      get(target, key) {
        if (key === 'accept') {
          return () => Promise.reject(new Error('permission denied for table alert_job'));
        }
        if (key === 'health') {
          return () =>
            Promise.resolve({ reachable: false, error: 'permission denied for table alert_job' });
        }
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    try {
      const receiver = createReceiver({ secret: SECRET, queue: createDurableQueue(refusing) });
      const answer = await receiver.handle(request());
      expect(answer.status).toBe(503);
      expect(answer.body).not.toMatch(/permission denied/);
      const line = lines.find((text) => text.includes('503 OVERLOADED'));
      expect(line).toMatch(/The queue store failed: permission denied for table alert_job\./);
      expect(line).not.toMatch(/handlers are slower/);
      const health = await receiver.health();
      expect(JSON.stringify(health)).toMatch(/permission denied for table alert_job/);
      await receiver.close();
    } finally {
      spy.mockRestore();
    }
  });

  it('close() waits for the running try and stores its verdict, then takes nothing more', async () => {
    const store = createMemoryStore();
    const receiver = receiverOn(store);
    let finished = false;
    receiver.on('churn_risk_alert', async () => {
      await sleep(200);
      finished = true;
    });
    await receiver.handle(request());
    await sleep(50);
    await receiver.close({ timeoutMs: 5_000 });
    expect(finished).toBe(true);
    expect(await store.counts()).toMatchObject({ completed: 1, active: 0 });
    const late = createTestDelivery({ userId: 'user_late' }, { secret: SECRET }).alert;
    await store.accept(
      { id: `${late.userId}:${late.triggeredAt}`, alert: late, receivedAt: Date.now() },
      { dedupeTtlMs: 1000 },
    );
    await sleep(50);
    expect((await store.counts()).waiting).toBe(1); // nobody took it after close
  });

  it('checks its options', () => {
    const store = createMemoryStore();
    expect(() => createDurableQueue(store, { leaseMs: 0 })).toThrow(TypeError);
    expect(() => createDurableQueue(store, { maxStalls: -1 })).toThrow(/maxStalls/);
  });
});

/** `inner`, counting the calls of each method by name. */
function counting(inner: AlertStore): { store: AlertStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(key), (calls.get(String(key)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

describe('createDurableQueue at the engine speed: one store call per alert', () => {
  it('finishes an alert and takes the next in one store call while alerts are due', async () => {
    const { store, calls } = counting(createMemoryStore());
    // Stored before the consumer starts taking: a backlog to drain.
    const producer = createReceiver({
      secret: SECRET,
      queue: createDurableQueue(store),
      consume: false,
    });
    for (let i = 0; i < 40; i++) expect((await producer.handle(request())).status).toBe(202);
    const receiver = receiverOn(store, { concurrency: 1 });
    let handled = 0;
    receiver.on('churn_risk_alert', () => {
      handled++;
    });
    await receiver.drain({ timeoutMs: 10_000 });
    expect(handled).toBe(40);
    const chained = calls.get('completeAndTake') ?? 0;
    const separate = (calls.get('take') ?? 0) + (calls.get('complete') ?? 0);
    // One call per alert: the completions took the next alert; separate takes and completions
    // only at the start and the end of the backlog.
    expect(chained).toBeGreaterThanOrEqual(39);
    expect(separate).toBeLessThanOrEqual(6);
    await Promise.all([receiver.close(), producer.close()]);
  });

  it('takes a few times per alert at a low rate, not once per free slot', async () => {
    const { store, calls } = counting(createMemoryStore());
    const receiver = receiverOn(store, { concurrency: 10, pollIntervalMs: 60_000 });
    let handled = 0;
    receiver.on('churn_risk_alert', () => {
      handled++;
    });
    await sleep(50); // started: the first takes found nothing
    const atStart = calls.get('take') ?? 0;
    for (let i = 1; i <= 20; i++) {
      expect((await receiver.handle(request())).status).toBe(202);
      const deadline = Date.now() + 5_000;
      while (handled < i && Date.now() < deadline) await sleep(2);
      await sleep(5); // the takes its wake-up started have answered
    }
    expect(handled).toBe(20);
    // Each accept wakes the loop: one take finds the alert, and the two it starts (their number
    // doubles after a take that found one) find nothing. Filling every free slot was eleven.
    const takes = (calls.get('take') ?? 0) - atStart;
    expect(takes).toBeGreaterThanOrEqual(20);
    expect(takes).toBeLessThanOrEqual(20 * 5);
    await receiver.close();
  });

  it('reclaims at every interval that passes, none skipped', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const { store, calls } = counting(createMemoryStore());
      const receiver = receiverOn(store, { leaseMs: 1_000, reclaimIntervalMs: 1_000 });
      receiver.on('churn_risk_alert', () => undefined);
      await vi.advanceTimersByTimeAsync(0);
      const first = calls.get('reclaimExpired') ?? 0;
      for (let interval = 1; interval <= 10; interval++) {
        await vi.advanceTimersByTimeAsync(1_000);
        expect((calls.get('reclaimExpired') ?? 0) - first).toBe(interval);
      }
      await receiver.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses an option it does not know, naming the right one', () => {
    const store = createMemoryStore();
    expect(() =>
      createDurableQueue(store, { lockDurationMs: 5_000 } as unknown as DurableQueueOptions),
    ).toThrow(/"lockDurationMs".*leaseMs/);
    expect(() =>
      createDurableQueue(store, { pollIntervalMS: 5 } as unknown as DurableQueueOptions),
    ).toThrow(/"pollIntervalMS" \(did you mean pollIntervalMs\?\)/);
  });
});

describe('a handler learns that its lease is gone (context.signal, context.stalls)', () => {
  it('aborts context.signal when a renewal is refused; a handler that checks it writes nothing twice', async () => {
    const store = createMemoryStore();
    const receiver = receiverOn(
      withExtend(store, () => Promise.resolve(false)),
      { leaseMs: 100, reclaimIntervalMs: 60_000, logger: recordingLogger() },
    );
    const seen: { aborted: boolean; reason: unknown }[] = [];
    receiver.on('churn_risk_alert', async (_alert, context) => {
      expect(context.signal.aborted).toBe(false);
      await sleep(250); // two renewals, both refused
      seen.push({ aborted: context.signal.aborted, reason: context.signal.reason });
    });
    expect((await receiver.handle(request())).status).toBe(202);
    await receiver.drain({ timeoutMs: 5_000 }).catch(() => undefined);
    await sleep(50);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.aborted).toBe(true);
    expect(String(seen[0]?.reason)).toMatch(/lease on alert .* was lost \(a renewal was refused\)/);
    await receiver.close({ timeoutMs: 1_000 });
  });

  it('aborts context.signal when the renewal timer fires after the lease ended (a frozen process)', async () => {
    const store = createMemoryStore();
    const receiver = receiverOn(store, {
      leaseMs: 100,
      reclaimIntervalMs: 60_000,
      logger: recordingLogger(),
    });
    let aborted: boolean | undefined;
    receiver.on('churn_risk_alert', async (_alert, context) => {
      // The event loop is blocked past the lease's end, as a process stopped by SIGSTOP or starved
      // would be: no renewal could run meanwhile.
      const until = Date.now() + 250;
      while (Date.now() < until) {
        // busy
      }
      await sleep(80);
      aborted = context.signal.aborted;
    });
    expect((await receiver.handle(request())).status).toBe(202);
    await receiver.drain({ timeoutMs: 5_000 }).catch(() => undefined);
    expect(aborted).toBe(true);
    await receiver.close({ timeoutMs: 1_000 });
  });

  it('reads context.signal aborted once the lease has ended, before any renewal ran (a thaw)', async () => {
    const store = createMemoryStore();
    const receiver = receiverOn(store, {
      leaseMs: 400, // renewed at 200 ms
      reclaimIntervalMs: 60_000,
      logger: recordingLogger(),
    });
    const seen: boolean[] = [];
    receiver.on('churn_risk_alert', async (_alert, context) => {
      // The handler's own short timer is due before the renewal; then the event loop is blocked
      // past the lease's end, as a process stopped by SIGSTOP is: when it runs again, this timer
      // fires first, and no renewal has looked at the lease yet.
      const timer = sleep(20);
      const until = Date.now() + 450;
      while (Date.now() < until) {
        // frozen
      }
      await timer;
      seen.push(context.signal.aborted);
    });
    expect((await receiver.handle(request())).status).toBe(202);
    await vi.waitFor(() => {
      expect(seen).toEqual([true]);
    });
    await receiver.close({ timeoutMs: 1_000 });
  });

  it('tells a handler retaken after a stall how often its takers died (context.stalls)', async () => {
    const store = createMemoryStore();
    const producer = createReceiver({
      secret: SECRET,
      queue: createDurableQueue(store),
      consume: false,
    });
    expect((await producer.handle(request())).status).toBe(202);
    // A taker dies mid-alert (it takes and never writes); the store puts the alert back.
    expect(await store.take({ token: 'dead', leaseMs: 10 })).toBeDefined();
    await sleep(20);
    expect(await store.reclaimExpired?.()).toBe(1);
    const receiver = receiverOn(store);
    const contexts: { stalls: number; aborted: boolean }[] = [];
    receiver.on('churn_risk_alert', (_alert, context) => {
      contexts.push({ stalls: context.stalls, aborted: context.signal.aborted });
    });
    await receiver.drain({ timeoutMs: 5_000 });
    expect(contexts).toEqual([{ stalls: 1, aborted: false }]);
    await Promise.all([receiver.close(), producer.close()]);
  });

  it('never aborts and reports no stall with the in-memory queue', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const contexts: { stalls: number; aborted: boolean }[] = [];
    receiver.on('churn_risk_alert', (_alert, context) => {
      contexts.push({ stalls: context.stalls, aborted: context.signal.aborted });
    });
    expect((await receiver.handle(request())).status).toBe(202);
    await receiver.drain({ timeoutMs: 5_000 });
    expect(contexts).toEqual([{ stalls: 0, aborted: false }]);
    await receiver.close();
  });
});

describe('what an operator must see without a logger: one warn line each, with the alert id', () => {
  /** An alert accepted, then taken by a taker that dies mid-alert, and put back by a reclaim. */
  async function lapsedAlert(store: AlertStore): Promise<string> {
    const producer = createReceiver({
      secret: SECRET,
      queue: createDurableQueue(store),
      consume: false,
    });
    const userId = `user_${Math.random().toString(36).slice(2)}`;
    expect((await producer.handle(request(userId))).status).toBe(202);
    const taken = await store.take({ token: 'dead', leaseMs: 10 });
    await sleep(20);
    expect(await store.reclaimExpired?.()).toBe(1);
    await producer.close();
    return taken?.id ?? '';
  }

  /** The lines written to `console[level]` while `work` runs. */
  async function printed(level: 'warn' | 'error', work: () => Promise<void>): Promise<string[]> {
    const spy = vi.spyOn(console, level).mockImplementation(() => undefined);
    try {
      await work();
      return spy.mock.calls.map((call) => String(call[0]));
    } finally {
      spy.mockRestore();
    }
  }
  const warned = (work: () => Promise<void>): Promise<string[]> => printed('warn', work);

  it('a lost lease', async () => {
    const store = createMemoryStore();
    const receiver = receiverOn(
      withExtend(store, () => Promise.resolve(false)),
      {
        leaseMs: 100,
        reclaimIntervalMs: 60_000,
      },
    );
    const ids: string[] = [];
    receiver.on('churn_risk_alert', async (_alert, context) => {
      ids.push(context.id);
      await sleep(120);
    });
    const lines = await warned(async () => {
      expect((await receiver.handle(request())).status).toBe(202);
      await vi.waitFor(() => {
        expect(ids).toHaveLength(1);
      });
      await sleep(150);
    });
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^\\[churn-risk\\] .*lease on alert ${ids[0] ?? '?'} was lost`),
      ),
    ]);
    await receiver.close({ timeoutMs: 1_000 });
  });

  it('a takeover (the stall counted), and no line for a take that is not one', async () => {
    const store = createMemoryStore();
    const id = await lapsedAlert(store);
    const receiver = receiverOn(store);
    receiver.on('churn_risk_alert', () => undefined);
    const lines = await warned(async () => {
      await receiver.drain({ timeoutMs: 5_000 });
      expect((await receiver.handle(request())).status).toBe(202);
      await receiver.drain({ timeoutMs: 5_000 });
    });
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^\\[churn-risk\\] .*alert ${id} is taken over.*stall 1 of at most 3`),
      ),
    ]);
    await receiver.close();
  });

  it('an alert failed as poison (more stalls than maxStalls), at error, with the fix', async () => {
    const store = createMemoryStore();
    const id = await lapsedAlert(store);
    const receiver = receiverOn(store, { maxStalls: 0 });
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs++;
    });
    receiver.onError(() => undefined); // no handler failure line then: only the poison line
    const lines = await printed('error', () => receiver.drain({ timeoutMs: 5_000 }));
    expect(runs).toBe(0);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^\\[churn-risk\\] churn-risk: alert ${id}: Failed as poison.*then retry it`),
      ),
    ]);
    expect((await store.failed()).map((failed) => failed.id)).toEqual([id]);
    await receiver.close();
  });

  it('goes to a given logger (a takeover at warn, a poison alert at error), not to the console', async () => {
    const logger = recordingLogger();
    const taken = createMemoryStore();
    const takenId = await lapsedAlert(taken);
    const poisoned = createMemoryStore();
    const poisonId = await lapsedAlert(poisoned);
    const receivers = [
      receiverOn(taken, { logger }),
      receiverOn(poisoned, { maxStalls: 0, logger }),
    ];
    for (const receiver of receivers) {
      receiver.on('churn_risk_alert', () => undefined);
      receiver.onError(() => undefined);
    }
    const lines = await warned(async () => {
      const errors = await printed('error', async () => {
        for (const receiver of receivers) await receiver.drain({ timeoutMs: 5_000 });
      });
      expect(errors).toEqual([]);
    });
    expect(lines).toEqual([]);
    expect(logger.lines.filter(([level]) => level === 'warn' || level === 'error')).toEqual([
      ['warn', expect.stringContaining(`alert ${takenId} is taken over`)],
      ['error', expect.stringContaining(`alert ${poisonId}: Failed as poison`)],
      // A given logger also gets each failure after the last try (here the poison alert's).
      ['error', `A handler of alert ${poisonId} failed after 1 try`],
    ]);
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });
});

describe('context.handlerId and context.idempotencyKey', () => {
  it('one key per handler, the same in every try; encoded as a header value', async () => {
    const store = createMemoryStore();
    const receiver = receiverOn(store, { retries: 1 });
    const seen: [string | undefined, string, number][] = [];
    let failOnce = true;
    receiver.on(
      'churn_risk_alert',
      (_alert, context) => {
        seen.push([context.handlerId, context.idempotencyKey, context.attempt]);
      },
      { id: 'crm' },
    );
    receiver.on(
      'churn_risk_alert',
      (_alert, context) => {
        seen.push([context.handlerId, context.idempotencyKey, context.attempt]);
        if (failOnce) {
          failOnce = false;
          throw new Error('once');
        }
      },
      { id: 'mail/ü' },
    );
    const { headers, body } = createTestDelivery(
      { userId: 'user 1/%', triggeredAt: '2026-11-28T01:00:00.000Z' },
      { secret: SECRET },
    );
    expect((await receiver.handle({ method: 'POST', headers, body })).status).toBe(202);
    await receiver.drain({ timeoutMs: 5_000 });
    const alertKey = 'user%201%2F%25%3A2026-11-28T01%3A00%3A00.000Z';
    expect(seen).toEqual([
      ['crm', `${alertKey}/crm`, 0],
      ['mail/ü', `${alertKey}/mail%2F%C3%BC`, 0],
      ['mail/ü', `${alertKey}/mail%2F%C3%BC`, 1],
    ]);
    await receiver.close();
  });
});
