import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestDelivery } from '../testing.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type {
  AlertContext,
  DedupeStore,
  Receiver,
  ReceiverOptions,
  ReceiverRequest,
} from '../receiver/types.js';

const SECRET = 'whsec_processing_55e0';
const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);

let sequence = 0;
function delivery(overrides: Record<string, unknown> = {}): ReceiverRequest {
  sequence++;
  const { headers, body } = createTestDelivery(
    {
      userId: `user_${sequence}`,
      triggeredAt: new Date(NOW_MS - sequence).toISOString(),
      ...overrides,
    },
    { secret: SECRET, timestamp: NOW_MS / 1000 },
  );
  return { method: 'POST', headers, body };
}

function make(options: Partial<ReceiverOptions> = {}): Receiver {
  return createReceiver({
    secret: SECRET,
    now: () => NOW_MS,
    retries: { backoffMs: () => 0 },
    ...options,
  });
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Lets every pending promise callback run (no timers involved). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('async mode', () => {
  it('answers before a slow handler finishes, and done settles after it', async () => {
    const receiver = make();
    const hold = gate();
    const events: string[] = [];
    receiver.on('churn_risk_alert', async () => {
      events.push('handler started');
      await hold.promise;
      events.push('handler finished');
    });
    const result = await receiver.handle(delivery());
    events.push(`answered ${result.status}`);
    // A copy of the result carries the same `done` (it is made on demand, as an own property).
    const copy = { ...result };
    expect(copy).toMatchObject({ status: 202, body: '{"received":true}' });
    void copy.done.then(() => events.push('done'));
    await settle();
    // No handler code runs before the answer, not even its synchronous start.
    expect(events).toEqual(['answered 202']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['answered 202', 'handler started']);
    expect(receiver.stats).toMatchObject({ running: 1, queued: 0, accepted: 1 });
    hold.open();
    await result.done;
    expect(events).toEqual(['answered 202', 'handler started', 'handler finished', 'done']);
  });

  it('gives handlers the alert and its context', async () => {
    const receiver = make();
    const seen: [unknown, AlertContext][] = [];
    receiver.on('churn_risk_alert', (alert, context) => {
      seen.push([alert, context]);
    });
    const request = delivery({ userId: 'user_ctx', extra: { nested: true } });
    await (
      await receiver.handle(request)
    ).done;
    const [alert, context] = seen[0]!;
    expect(alert).toEqual(JSON.parse(request.body as string));
    // `signal` is an accessor (made when read): read here as a handler reads it.
    expect({ ...context, signal: context.signal }).toEqual({
      id: `user_ctx:${(alert as { triggeredAt: string }).triggeredAt}`,
      receivedAt: new Date(NOW_MS),
      attempt: 0,
      event: 'churn_risk_alert',
      signal: expect.any(AbortSignal) as AbortSignal,
      stalls: 0,
    });
    expect(context.signal.aborted).toBe(false);
  });

  it('runs a replayed delivery once, also when both arrive at the same time', async () => {
    const receiver = make();
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs++;
    });
    const request = delivery();
    const answers = await Promise.all([
      receiver.handle(request),
      receiver.handle(request),
      receiver.handle(request),
    ]);
    await receiver.drain();
    expect(answers.map((answer) => answer.body).sort()).toEqual([
      '{"received":true,"duplicate":true}',
      '{"received":true,"duplicate":true}',
      '{"received":true}',
    ]);
    expect(runs).toBe(1);
    expect(receiver.stats.duplicates).toBe(2);
  });

  it('runs duplicates again with dedupe: false', async () => {
    const receiver = make({ dedupe: false });
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs++;
    });
    const request = delivery();
    await receiver.handle(request);
    expect((await receiver.handle(request)).body).toBe('{"received":true}');
    await receiver.drain();
    expect(runs).toBe(2);
  });

  it('retries a failing handler with 1 s, 2 s, 4 s backoff, then reports it to onError', async () => {
    vi.useFakeTimers();
    const receiver = createReceiver({ secret: SECRET, now: () => NOW_MS }); // default retries
    const attempts: number[] = [];
    const failure = new Error('downstream unavailable');
    receiver.on('churn_risk_alert', (_alert, context) => {
      attempts.push(context.attempt);
      throw failure;
    });
    const reports: unknown[][] = [];
    receiver.onError((error, alert, context) => {
      reports.push([error, alert.userId, context.attempt]);
    });
    const request = delivery({ userId: 'user_retry' });
    await receiver.handle(request);
    await vi.advanceTimersByTimeAsync(0);
    expect(attempts).toEqual([0]);
    for (const [wait, expected] of [
      [999, [0]],
      [1, [0, 1]],
      [1999, [0, 1]],
      [1, [0, 1, 2]],
      [3999, [0, 1, 2]],
    ] as const) {
      await vi.advanceTimersByTimeAsync(wait);
      expect(attempts).toEqual(expected);
    }
    expect(reports).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toEqual([0, 1, 2, 3]);
    expect(reports).toEqual([[failure, 'user_retry', 3]]);
    await receiver.drain();
    expect(receiver.stats.failed).toBe(1);
  });

  it('uses a custom retry count and backoff; a handler that recovers is not reported', async () => {
    const backoff = vi.fn((attempt: number) => attempt * 0);
    const shouldRetry = vi.fn(() => true);
    const receiver = make({ retries: { retries: 1, backoffMs: backoff, shouldRetry } });
    const attempts: number[] = [];
    let calls = 0;
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      attempts.push(attempt);
      calls++;
      if (calls === 1) throw new Error('first try fails');
    });
    const onError = vi.fn();
    receiver.onError(onError);
    await (
      await receiver.handle(delivery())
    ).done;
    expect(calls).toBe(2);
    // backoffMs and shouldRetry are told the try that failed, counted as context.attempt.
    expect(attempts).toEqual([0, 1]);
    expect(backoff.mock.calls).toEqual([[0]]);
    expect(shouldRetry.mock.calls).toEqual([[expect.any(Error), 0]]);
    expect(onError).not.toHaveBeenCalled();
  });

  it('lets each handler run, retry and fail on its own', async () => {
    const receiver = make({ retries: { retries: 2, backoffMs: () => 0 } });
    const calls = { failing: 0, healthy: 0 };
    receiver.on('churn_risk_alert', async () => {
      calls.failing++;
      await Promise.resolve();
      throw new Error('always');
    });
    receiver.on('churn_risk_alert', () => {
      calls.healthy++;
    });
    const reported: string[] = [];
    receiver.onError((error) => {
      reported.push((error as Error).message);
    });
    await (
      await receiver.handle(delivery())
    ).done;
    expect(calls).toEqual({ failing: 3, healthy: 1 });
    expect(reported).toEqual(['always']);
  });

  it('retries and reports synchronous handlers like async ones, and counts their failures', async () => {
    const receiver = make({ retries: { retries: 1, backoffMs: () => 0 } });
    const calls = { throwing: 0, healthy: 0, recovering: 0 };
    receiver.on('churn_risk_alert', () => {
      calls.throwing++;
      throw new Error('sync failure');
    });
    receiver.on('churn_risk_alert', () => {
      calls.healthy++;
    });
    receiver.on('churn_risk_alert', (_alert, context) => {
      calls.recovering++;
      if (context.attempt === 0) throw new Error('first try');
    });
    const reported: [string, number][] = [];
    receiver.onError((error, _alert, context) => {
      reported.push([(error as Error).message, context.attempt]);
    });
    const result = await receiver.handle(delivery());
    expect(receiver.stats).toMatchObject({ running: 1, failed: 0 });
    await result.done;
    expect(calls).toEqual({ throwing: 2, healthy: 1, recovering: 2 });
    expect(reported).toEqual([['sync failure', 1]]);
    expect(receiver.stats).toMatchObject({ running: 0, queued: 0, failed: 1 });
    // All synchronous and successful: done settles without any retry timer.
    const quiet = make();
    let ran = 0;
    quiet.on('churn_risk_alert', () => {
      ran++;
    });
    const first = await quiet.handle(delivery());
    const second = await quiet.handle(delivery());
    await Promise.all([first.done, second.done]);
    expect(ran).toBe(2);
    expect(quiet.stats).toMatchObject({ running: 0, accepted: 2, failed: 0 });
  });

  it('survives a throwing and a rejecting onError, falling back to console.error', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', listener);
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const receiver = make({ retries: 0 });
      receiver.on('churn_risk_alert', () => Promise.reject(new Error('handler broke')));
      receiver.onError(() => {
        throw new Error('onError broke');
      });
      receiver.onError(() => Promise.reject(new Error('async onError broke')));
      const after = vi.fn();
      receiver.on('churn_risk_alert', after);
      const first = await receiver.handle(delivery());
      await first.done;
      const second = await receiver.handle(delivery());
      await second.done;
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(after).toHaveBeenCalledTimes(2); // later alerts still run
      expect(log).toHaveBeenCalledTimes(4);
      const logged = log.mock.calls.map((args) => args.map(String).join(' ')).join('\n');
      expect(logged).toContain('onError broke');
      expect(logged).toContain('async onError broke');
      expect(logged).not.toContain(SECRET);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  it('logs a failure with console.error when no onError is registered', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const receiver = make({ retries: 0 });
    receiver.on('churn_risk_alert', () => {
      throw new Error('nobody listens');
    });
    await (
      await receiver.handle(delivery({ userId: 'user_log' }))
    ).done;
    expect(log).toHaveBeenCalledOnce();
    expect(String(log.mock.calls[0]![0])).toContain('user_log');
  });

  it('stops calling a handler removed with off', async () => {
    const receiver = make();
    const handler = vi.fn();
    receiver.on('churn_risk_alert', handler).off('churn_risk_alert', handler);
    await (
      await receiver.handle(delivery())
    ).done;
    expect(handler).not.toHaveBeenCalled();
  });

  it('passes result.done to waitUntil in fetch', async () => {
    const receiver = make();
    const hold = gate();
    let finished = false;
    receiver.on('churn_risk_alert', async () => {
      await hold.promise;
      finished = true;
    });
    const kept: Promise<unknown>[] = [];
    const { headers, body } = delivery();
    const response = await receiver.fetch(
      new Request('http://x/hooks', {
        method: 'POST',
        headers: headers as Record<string, string>,
        body: body as string,
      }),
      { waitUntil: (promise) => kept.push(promise) },
    );
    expect(response.status).toBe(202);
    expect(kept).toHaveLength(1);
    expect(finished).toBe(false);
    hold.open();
    await kept[0];
    expect(finished).toBe(true);
  });

  it('accepts Headers and ArrayBuffer or Uint8Array bodies in handle', async () => {
    const receiver = make();
    const { headers, body } = delivery();
    const bytes = new TextEncoder().encode(body as string);
    const result = await receiver.handle({
      method: 'post',
      headers: new Headers(headers as Record<string, string>),
      body: bytes.buffer,
    });
    expect(result.status).toBe(202);
    expect((await receiver.handle({ method: 'POST', headers, body: bytes })).body).toContain(
      'duplicate',
    );
  });
});

describe('drain and close', () => {
  it('drain waits for queued and running work', async () => {
    const receiver = make({ concurrency: 1 });
    const hold = gate();
    const finished: string[] = [];
    receiver.on('churn_risk_alert', async (alert) => {
      await hold.promise;
      finished.push(alert.userId);
    });
    await receiver.handle(delivery({ userId: 'a' }));
    await receiver.handle(delivery({ userId: 'b' }));
    expect(receiver.stats).toMatchObject({ running: 1, queued: 1 });
    let drained = false;
    const draining = receiver.drain().then(() => (drained = true));
    await settle();
    expect(drained).toBe(false);
    hold.open();
    await draining;
    expect(finished).toEqual(['a', 'b']);
    expect(receiver.stats).toMatchObject({ running: 0, queued: 0 });
  });

  it('drain resolves at once when idle and rejects with a clear Error after timeoutMs', async () => {
    vi.useFakeTimers();
    const receiver = make();
    await receiver.drain({ timeoutMs: 10 });
    const hold = gate();
    receiver.on('churn_risk_alert', () => hold.promise);
    await receiver.handle(delivery());
    const draining = receiver.drain({ timeoutMs: 1000 });
    const outcome = draining.then(
      () => 'resolved',
      (error: unknown) => (error as Error).message,
    );
    await vi.advanceTimersByTimeAsync(1000);
    expect(await outcome).toMatch(/did not drain within 1000 ms: 0 alerts queued, 1 running/);
    hold.open();
    await receiver.drain({ timeoutMs: 1000 });
  });

  it('close answers 503 CLOSED to new deliveries while it waits for work in flight', async () => {
    const receiver = make();
    const hold = gate();
    receiver.on('churn_risk_alert', () => hold.promise);
    await receiver.handle(delivery());
    let closed = false;
    const closing = receiver.close().then(() => (closed = true));
    const refused = await receiver.handle(delivery());
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error.code).toBe('CLOSED');
    await settle();
    expect(closed).toBe(false);
    hold.open();
    await closing;
    expect(closed).toBe(true);
  });
});

describe('sync mode', () => {
  it('answers after the handler; a failure answers 500 and the redelivery runs the handler again', async () => {
    const receiver = make({ mode: 'sync', retries: { retries: 1, backoffMs: () => 0 } });
    const events: string[] = [];
    let healthy = false;
    receiver.on('churn_risk_alert', async (_alert, context) => {
      await Promise.resolve();
      events.push(`try ${context.attempt}`);
      if (!healthy) throw new Error('not yet');
    });
    receiver.onError(() => {
      events.push('reported');
    });
    const request = delivery();
    const failed = await receiver.handle(request);
    events.push(`answered ${failed.status}`);
    expect(JSON.parse(failed.body).error.code).toBe('HANDLER_FAILED');
    healthy = true;
    const redelivered = await receiver.handle(request);
    events.push(`answered ${redelivered.status}`);
    expect(redelivered.body).toBe('{"received":true}');
    expect((await receiver.handle(request)).body).toBe('{"received":true,"duplicate":true}');
    expect(events).toEqual(['try 0', 'try 1', 'reported', 'answered 500', 'try 0', 'answered 202']);
  });

  it('answers a redelivery that arrives during a failing first try 500 too, and the next one runs again', async () => {
    const receiver = make({ mode: 'sync', retries: 0 });
    const hold = gate();
    let healthy = false;
    const tries: string[] = [];
    receiver.on('churn_risk_alert', async () => {
      tries.push(healthy ? 'healthy try' : 'failing try');
      if (healthy) return;
      await hold.promise;
      throw new Error('downstream is down');
    });
    receiver.onError(() => undefined);
    const request = delivery({ userId: 'user_concurrent' });
    const first = receiver.handle(request);
    await new Promise((resolve) => setImmediate(resolve));
    // The service times out and redelivers while the first try is still running.
    const second = receiver.handle(request);
    await settle();
    hold.open();
    expect((await first).status).toBe(500);
    const concurrent = await second;
    expect(concurrent.status).toBe(500);
    expect(JSON.parse(concurrent.body).error.code).toBe('HANDLER_FAILED');
    healthy = true;
    expect((await receiver.handle(request)).status).toBe(202);
    expect(tries).toEqual(['failing try', 'healthy try']);
  });

  it('releases the claim when it answers 503, so the redelivery is processed', async () => {
    const receiver = make({ mode: 'sync', concurrency: 1, maxQueue: 0 });
    const hold = gate();
    const seen: string[] = [];
    receiver.on('churn_risk_alert', async (alert) => {
      seen.push(alert.userId);
      await hold.promise;
    });
    const first = receiver.handle(delivery({ userId: 'first' }));
    await settle();
    const second = delivery({ userId: 'second' });
    const refused = await receiver.handle(second);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    hold.open();
    expect((await first).status).toBe(202);
    expect((await receiver.handle(second)).status).toBe(202);
    expect(seen).toEqual(['first', 'second']);
  });
});

describe('dedupe store', () => {
  it('claims each identity in a custom store and answers 503 when the store fails', async () => {
    const claimed: [string, number][] = [];
    let broken = false;
    const store: DedupeStore = {
      claim: async (key, ttlMs) => {
        if (broken) throw new Error('redis down');
        claimed.push([key, ttlMs]);
        return true;
      },
      release: () => undefined,
    };
    const receiver = make({ dedupe: { store }, dedupeTtlMs: 60_000 });
    const request = delivery({ userId: 'user_store' });
    expect((await receiver.handle(request)).status).toBe(202);
    expect(claimed).toEqual([[expect.stringMatching(/^user_store:/), 60_000]]);
    broken = true;
    const answer = await receiver.handle(delivery());
    expect(answer.status).toBe(503);
    expect(answer.body).not.toContain('redis');
  });
});

describe('configuration', () => {
  it.each([
    ['no secret', {}],
    ['an empty secret', { secret: '' }],
    ['an empty list of secrets', { secret: [] }],
    ['a list with an empty secret', { secret: ['a', ''] }],
    ['a zero concurrency', { secret: 's', concurrency: 0 }],
    ['a negative maxQueue', { secret: 's', maxQueue: -1 }],
    ['a fractional maxBodyBytes', { secret: 's', maxBodyBytes: 1.5 }],
    ['negative retries', { secret: 's', retries: -1 }],
    ['an unknown mode', { secret: 's', mode: 'later' }],
    ['a negative tolerance', { secret: 's', tolerance: -5 }],
    ['an invalid header name', { secret: 's', signatureHeader: 'bad header' }],
    ['an unknown signedContent', { secret: 's', signedContent: 'everything' }],
  ])('throws TypeError at creation for %s', (_name, options) => {
    expect(() => createReceiver(options as ReceiverOptions)).toThrow(TypeError);
  });

  it('refuses a handler for an unknown event at runtime and exposes the body limit', () => {
    const receiver = createReceiver({ secret: 's' });
    expect(receiver.maxBodyBytes).toBe(1_048_576);
    expect(() =>
      (receiver as unknown as Receiver<{ other: unknown }>).on('other', () => undefined),
    ).toThrow(TypeError);
  });
});
