import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ChurnRiskClient,
  ServiceError,
  type BatcherOptions,
  type BulkEventItem,
} from '@churn-risk/core';
import {
  API_KEY,
  startFakeService,
  type FakeService,
  type Handler,
} from '../client/fake-service.test-util.js';

let service: FakeService;
let client: ChurnRiskClient;
let inFlight = 0;
let maxInFlight = 0;
/** While true, the service answers every request with 503 (an outage). */
let outage = false;

/** Accepts a bulk request after a short pause, tracking how many are open at once. */
const accept: Handler = async (request) => {
  if (outage) return { status: 503 };
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  await new Promise((resolve) => setTimeout(resolve, 5));
  inFlight--;
  return { status: 202, body: { accepted: (request.json as { events: unknown[] }).events.length } };
};

beforeEach(async () => {
  inFlight = 0;
  maxInFlight = 0;
  outage = false;
  service = await startFakeService(accept);
  client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url, maxRetries: 0 });
});
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await service.close();
});

function events(count: number, from = 0): BulkEventItem[] {
  return Array.from({ length: count }, (_, i) => ({ userId: `u${from + i}`, event: 'login' }));
}

/** The userIds of each bulk request the service received. */
function batches(): string[][] {
  return service.requests.map((r) => {
    expect([r.method, r.url]).toEqual(['POST', '/v1/events/bulk']);
    return (r.json as { events: BulkEventItem[] }).events.map((e) => e.userId);
  });
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function batcherWith(options: BatcherOptions = {}) {
  const flushed: number[] = [];
  const errors: ServiceError[] = [];
  let signal = deferred<undefined>();
  const batcher = client.createBatcher({
    flushInterval: 60_000,
    ...options,
    onFlush: (count) => {
      flushed.push(count);
      signal.resolve(undefined);
    },
    onError: (error) => {
      errors.push(error);
      signal.resolve(undefined);
    },
  });
  /** Resolves at the next onFlush or onError. */
  const next = (): Promise<void> =>
    signal.promise.then(() => {
      signal = deferred<undefined>();
    });
  return { batcher, flushed, errors, next };
}

describe('flushing', () => {
  it('reaching maxSize starts a flush', async () => {
    const { batcher, flushed, next } = batcherWith({ maxSize: 3 });
    batcher.push(events(1)[0]!);
    batcher.push(events(1, 1)[0]!);
    expect(batcher.size).toBe(2);
    batcher.push(events(1, 2)[0]!);
    expect(batcher.size).toBe(0);
    await next();
    expect(batches()).toEqual([['u0', 'u1', 'u2']]);
    expect(flushed).toEqual([3]);
    await batcher.destroy();
  });

  it('the timer flushes every flushInterval when events wait, and does nothing when empty', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { batcher, flushed, next } = batcherWith({ flushInterval: 1000 });
    vi.advanceTimersByTime(1000);
    expect(await batcher.flush()).toBe(0);
    expect(service.requests).toHaveLength(0);
    for (const item of events(2)) batcher.push(item);
    vi.advanceTimersByTime(999);
    expect(batcher.size).toBe(2);
    vi.advanceTimersByTime(1);
    expect(batcher.size).toBe(0);
    await next();
    expect(batches()).toEqual([['u0', 'u1']]);
    expect(flushed).toEqual([2]);
    await batcher.destroy();
  });

  it("uses an unref'd timer", async () => {
    const spy = vi.spyOn(globalThis, 'setInterval');
    const batcher = client.createBatcher();
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(spy.mock.calls[0]?.[1]).toBe(5000);
    expect(timer.hasRef()).toBe(false);
    await batcher.destroy();
  });

  it('flush() sends everything in requests of at most maxSize, in order, one at a time; onFlush per request', async () => {
    const { batcher, flushed } = batcherWith({ maxSize: 3 });
    for (const item of events(8)) batcher.push(item);
    await expect(batcher.flush()).resolves.toBe(8);
    expect(batches()).toEqual([
      ['u0', 'u1', 'u2'],
      ['u3', 'u4', 'u5'],
      ['u6', 'u7'],
    ]);
    expect(maxInFlight).toBe(1);
    expect(flushed).toEqual([3, 3, 2]);
    const keys = service.requests.map((r) => r.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(3);
    await batcher.destroy();
  });

  it('concurrent flush() calls share one pending flush', async () => {
    const { batcher } = batcherWith({ maxSize: 500 });
    for (const item of events(4)) batcher.push(item);
    const first = batcher.flush();
    const second = batcher.flush();
    expect(second).toBe(first);
    await expect(Promise.all([first, second])).resolves.toEqual([4, 4]);
    expect(service.requests).toHaveLength(1);
    await batcher.destroy();
  });
});

describe('failures', () => {
  it('keeps a failed batch at the head and resends it first, same events and idempotency key', async () => {
    const { batcher, errors } = batcherWith({ maxSize: 10 });
    service.reply({ status: 503 });
    for (const item of events(3)) batcher.push(item);
    await expect(batcher.flush()).rejects.toMatchObject({ code: 'SERVER_ERROR', status: 503 });
    expect(errors).toEqual([]);
    expect(batcher.size).toBe(3);
    batcher.push(events(1, 3)[0]!);
    await expect(batcher.flush()).resolves.toBe(4);
    expect(batches()).toEqual([['u0', 'u1', 'u2'], ['u0', 'u1', 'u2'], ['u3']]);
    const keys = service.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    await batcher.destroy();
  });

  it('a timer- or size-triggered failure goes to onError and the events stay', async () => {
    const { batcher, errors, flushed, next } = batcherWith({ maxSize: 2 });
    service.reply({ status: 429 });
    for (const item of events(2)) batcher.push(item);
    await next();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(batcher.size).toBe(2);
    await expect(batcher.flush()).resolves.toBe(2);
    expect(flushed).toEqual([2]);
    expect(batches()).toEqual([
      ['u0', 'u1'],
      ['u0', 'u1'],
    ]);
    await batcher.destroy();
  });

  it('drops a batch the service rejects as invalid (4xx other than 408/429) and reports it', async () => {
    const { batcher } = batcherWith({ maxSize: 500 });
    service.reply({
      status: 400,
      body: { error: { code: 'VALIDATION_ERROR', message: 'bad event' } },
    });
    for (const item of events(2)) batcher.push(item);
    const error = await batcher.flush().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, dropped: 2 });
    expect(batcher.size).toBe(0);
    batcher.push(events(1, 2)[0]!);
    await expect(batcher.flush()).resolves.toBe(1);
    expect(batches()).toEqual([['u0', 'u1'], ['u2']]);
    await batcher.destroy();
  });

  it('reports a dropped invalid batch of a size-triggered flush to onError', async () => {
    const { batcher, errors, next } = batcherWith({ maxSize: 2 });
    service.reply({ status: 413 });
    for (const item of events(2)) batcher.push(item);
    await next();
    expect(errors[0]).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', dropped: 2 });
    expect(batcher.size).toBe(0);
    await batcher.destroy();
  });

  it.each([
    [401, 'UNAUTHORIZED'],
    [403, 'FORBIDDEN'],
  ])(
    'keeps the batch on %i (a wrong or revoked key): onError gets it, nothing is dropped, the next flush resends it',
    async (status, code) => {
      const { batcher, errors, flushed, next } = batcherWith({ maxSize: 2 });
      service.reply({ status });
      for (const item of events(3)) batcher.push(item);
      await next();
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(ServiceError);
      expect(errors[0]).toMatchObject({ code, status });
      expect(errors[0]?.dropped).toBeUndefined();
      expect(errors[0]?.message).not.toContain(API_KEY);
      // The refused batch is back at the head, ahead of the event that came after it.
      expect(batcher.size).toBe(3);
      await expect(batcher.flush()).resolves.toBe(3);
      expect(flushed).toEqual([2, 1]);
      expect(batches()).toEqual([['u0', 'u1'], ['u0', 'u1'], ['u2']]);
      const keys = service.requests.map((r) => r.headers['idempotency-key']);
      expect(keys[1]).toBe(keys[0]);
      expect(errors).toHaveLength(1);
      await batcher.destroy();
    },
  );

  it.each([
    [401, 'UNAUTHORIZED'],
    [403, 'FORBIDDEN'],
  ])(
    'an explicit flush refused with %i rejects with the error, keeps every event and drops none',
    async (status, code) => {
      const { batcher, errors } = batcherWith({ maxSize: 2 });
      service.reply(accept, { status });
      for (const item of events(5)) batcher.push(item);
      const error = await batcher.flush().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceError);
      expect(error).toMatchObject({ code, status });
      expect((error as ServiceError).dropped).toBeUndefined();
      expect(errors).toEqual([]);
      // The first batch went through; the refused one and the rest wait, in order.
      expect(batcher.size).toBe(3);
      await expect(batcher.flush()).resolves.toBe(3);
      expect(batches()).toEqual([['u0', 'u1'], ['u2', 'u3'], ['u2', 'u3'], ['u4']]);
      await batcher.destroy();
    },
  );

  it('events kept after a 401 are still bounded by maxQueueSize (QUEUE_OVERFLOW)', async () => {
    const { batcher, errors } = batcherWith({ maxSize: 2, maxQueueSize: 3 });
    service.reply({ status: 401 });
    for (const item of events(2)) batcher.push(item);
    await expect(batcher.flush()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(batcher.size).toBe(2);
    for (const item of events(2, 2)) batcher.push(item);
    expect(errors.map((e) => [e.code, e.dropped])).toEqual([['QUEUE_OVERFLOW', 1]]);
    expect(batcher.size).toBe(3);
    await expect(batcher.flush()).resolves.toBe(3);
    // The oldest refused event went; the rest were sent in order, under a fresh key.
    expect(batches()).toEqual([['u0', 'u1'], ['u1', 'u2'], ['u3']]);
    await batcher.destroy();
  });

  it('an explicit flush goes on after a dropped batch, then rejects with the drop', async () => {
    const { batcher, flushed, errors } = batcherWith({ maxSize: 2 });
    service.reply(accept, { status: 422 }, accept);
    for (const item of events(6)) batcher.push(item);
    // The pushes started a size-triggered flush; flush() joins it and so receives the drop.
    const error = await batcher.flush().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', status: 422, dropped: 2 });
    expect(errors).toEqual([]);
    expect(flushed).toEqual([2, 2]);
    expect(batches()).toEqual([
      ['u0', 'u1'],
      ['u2', 'u3'],
      ['u4', 'u5'],
    ]);
    expect(batcher.size).toBe(0);
    await batcher.destroy();
  });

  it('several dropped batches of one explicit flush reject as one error counting them all', async () => {
    const { batcher, flushed, errors } = batcherWith({ maxSize: 2 });
    service.reply({ status: 400 }, accept, { status: 400 });
    for (const item of events(6)) batcher.push(item);
    const error = await batcher.flush().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, dropped: 4 });
    expect((error as ServiceError).cause).toMatchObject({ code: 'VALIDATION_ERROR', dropped: 2 });
    expect(errors).toEqual([]);
    expect(flushed).toEqual([2]);
    expect(batches()).toHaveLength(3);
    expect(batcher.size).toBe(0);
    await batcher.destroy();
  });

  it('a timer- or size-triggered flush reports each drop to onError and sends the rest', async () => {
    const { batcher, flushed, errors, next } = batcherWith({ maxSize: 2 });
    service.reply({ status: 400 }, accept, { status: 413 });
    for (const item of events(6)) batcher.push(item);
    while (errors.length + flushed.length < 3) await next();
    expect(errors.map((e) => [e.code, e.dropped])).toEqual([
      ['VALIDATION_ERROR', 2],
      ['PAYLOAD_TOO_LARGE', 2],
    ]);
    expect(flushed).toEqual([2]);
    expect(batches()).toEqual([
      ['u0', 'u1'],
      ['u2', 'u3'],
      ['u4', 'u5'],
    ]);
    expect(batcher.size).toBe(0);
    await batcher.destroy();
  });

  it('a retryable failure after a drop stops an explicit flush: it rejects with the failure, the drop goes to onError', async () => {
    const { batcher, flushed, errors } = batcherWith({ maxSize: 2 });
    service.reply({ status: 400 }, { status: 503 });
    for (const item of events(6)) batcher.push(item);
    await expect(batcher.flush()).rejects.toMatchObject({ code: 'SERVER_ERROR', status: 503 });
    expect(errors.map((e) => [e.code, e.dropped])).toEqual([['VALIDATION_ERROR', 2]]);
    expect(flushed).toEqual([]);
    expect(batcher.size).toBe(4);
    await expect(batcher.flush()).resolves.toBe(4);
    expect(batches()).toEqual([
      ['u0', 'u1'],
      ['u2', 'u3'],
      ['u2', 'u3'],
      ['u4', 'u5'],
    ]);
    await batcher.destroy();
  });

  it('a failure that is not a ServiceError goes to onError wrapped (timer/size) and keeps the batch', async () => {
    const hookError = new Error('hook bug');
    let hookFails = true;
    const hooked = new ChurnRiskClient({
      apiKey: API_KEY,
      baseUrl: service.url,
      maxRetries: 0,
      onRequest: () => {
        if (hookFails) throw hookError;
      },
    });
    const errors: ServiceError[] = [];
    const failed = deferred<undefined>();
    const batcher = hooked.createBatcher({
      flushInterval: 60_000,
      maxSize: 2,
      onError: (error) => {
        errors.push(error);
        failed.resolve(undefined);
      },
    });
    for (const item of events(2)) batcher.push(item);
    await failed.promise;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ServiceError);
    expect(errors[0]).toMatchObject({ code: 'FLUSH_FAILED' });
    expect(errors[0]?.message).toContain('hook bug');
    expect(errors[0]?.cause).toBe(hookError);
    expect(batcher.size).toBe(2);
    // An explicit flush rejects with the error itself; the batch still stays at the head.
    await expect(batcher.flush()).rejects.toBe(hookError);
    expect(errors).toHaveLength(1);
    expect(batcher.size).toBe(2);
    expect(service.requests).toHaveLength(0);
    hookFails = false;
    batcher.push(events(1, 2)[0]!);
    await expect(batcher.flush()).resolves.toBe(3);
    expect(batches()).toEqual([['u0', 'u1'], ['u2']]);
    await batcher.destroy();
  });

  it('after a failed flush, pushes past maxSize send nothing until the next timer flush succeeds', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { batcher, errors, flushed, next } = batcherWith({ maxSize: 2, flushInterval: 1000 });
    outage = true;
    for (const item of events(2)) batcher.push(item);
    await next();
    expect(errors.map((e) => e.code)).toEqual(['SERVER_ERROR']);
    // A started flush takes its batch off the queue at once: the size shows none started.
    for (const item of events(20, 2)) batcher.push(item);
    expect(batcher.size).toBe(22);
    // A failing timer flush keeps the batcher backing off.
    vi.advanceTimersByTime(1000);
    expect(batcher.size).toBe(20);
    await next();
    expect(errors.map((e) => e.code)).toEqual(['SERVER_ERROR', 'SERVER_ERROR']);
    batcher.push(events(1, 22)[0]!);
    expect(batcher.size).toBe(23);
    expect(service.requests).toHaveLength(2);

    outage = false;
    vi.advanceTimersByTime(1000);
    expect(batcher.size).toBe(21);
    while (flushed.reduce((sum, n) => sum + n, 0) < 23) await next();
    expect(batcher.size).toBe(0);
    const ids = batches();
    expect(ids.slice(0, 3)).toEqual([
      ['u0', 'u1'],
      ['u0', 'u1'],
      ['u0', 'u1'],
    ]);
    expect(ids.slice(3).flat()).toEqual(events(21, 2).map((e) => e.userId));
    expect(ids).toHaveLength(3 + 11);
    expect(errors).toHaveLength(2);
    // Recovered: reaching maxSize starts a flush again.
    for (const item of events(2, 23)) batcher.push(item);
    expect(batcher.size).toBe(0);
    while (flushed.length < 13) await next();
    expect(batches().at(-1)).toEqual(['u23', 'u24']);
    await batcher.destroy();
  });

  it('a successful explicit flush() also ends the backoff', async () => {
    const { batcher, errors, flushed, next } = batcherWith({ maxSize: 2 });
    outage = true;
    for (const item of events(2)) batcher.push(item);
    await next();
    expect(errors).toHaveLength(1);
    for (const item of events(2, 2)) batcher.push(item);
    expect(batcher.size).toBe(4);
    outage = false;
    await expect(batcher.flush()).resolves.toBe(4);
    for (const item of events(2, 4)) batcher.push(item);
    expect(batcher.size).toBe(0);
    while (flushed.length < 3) await next();
    expect(batches().slice(1)).toEqual([
      ['u0', 'u1'],
      ['u2', 'u3'],
      ['u4', 'u5'],
    ]);
    await batcher.destroy();
  });

  it('over maxQueueSize drops the oldest events and reports QUEUE_OVERFLOW with the count', async () => {
    const { batcher, errors } = batcherWith({ maxSize: 500, maxQueueSize: 3 });
    for (const item of events(5)) batcher.push(item);
    expect(errors.map((e) => [e.code, e.dropped])).toEqual([
      ['QUEUE_OVERFLOW', 1],
      ['QUEUE_OVERFLOW', 1],
    ]);
    expect(errors[0]).toBeInstanceOf(ServiceError);
    await expect(batcher.flush()).resolves.toBe(3);
    expect(batches()).toEqual([['u2', 'u3', 'u4']]);
    await batcher.destroy();
  });

  it('a throwing onError cannot break push', async () => {
    const batcher = client.createBatcher({
      maxSize: 500,
      maxQueueSize: 1,
      onError: () => {
        throw new Error('listener bug');
      },
    });
    batcher.push(events(1)[0]!);
    expect(() => batcher.push(events(1, 1)[0]!)).not.toThrow();
    expect(batcher.size).toBe(1);
    await batcher.destroy();
    expect(batches()).toEqual([['u1']]);
  });
});

describe('destroy', () => {
  it('stops the timer, sends what is left, then push throws', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { batcher } = batcherWith({ maxSize: 500 });
    for (const item of events(3)) batcher.push(item);
    expect(vi.getTimerCount()).toBe(1);
    await expect(batcher.destroy()).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
    expect(batches()).toEqual([['u0', 'u1', 'u2']]);
    expect(() => batcher.push(events(1)[0]!)).toThrow(
      expect.objectContaining({ code: 'BATCHER_DESTROYED' }),
    );
  });

  it('waits for a flush in flight and sends nothing twice', async () => {
    const { batcher } = batcherWith({ maxSize: 2 });
    for (const item of events(3)) batcher.push(item);
    await batcher.destroy();
    expect(batches()).toEqual([['u0', 'u1'], ['u2']]);
  });

  it('rejects if the final flush failed', async () => {
    const { batcher } = batcherWith({ maxSize: 500 });
    service.reply({ status: 500 });
    batcher.push(events(1)[0]!);
    await expect(batcher.destroy()).rejects.toMatchObject({ code: 'SERVER_ERROR' });
    expect(() => batcher.push(events(1)[0]!)).toThrow(ServiceError);
    expect(batcher.size).toBe(1);
  });
});

describe('validation', () => {
  it.each([
    ['maxSize 0', { maxSize: 0 }],
    ['maxSize 501', { maxSize: 501 }],
    ['maxSize 2.5', { maxSize: 2.5 }],
    ['flushInterval 0', { flushInterval: 0 }],
    ['maxQueueSize 0', { maxQueueSize: 0 }],
  ])('createBatcher rejects %s', (_name, options) => {
    expect(() => client.createBatcher(options)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR' }),
    );
  });

  it('push validates at once and queues nothing invalid', async () => {
    const batcher = client.createBatcher();
    expect(() => batcher.push({ userId: '', event: 'login' })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR' }),
    );
    expect(() => batcher.push({ userId: 'u1', event: 'x', timestamp: 'nope' })).toThrow(
      'timestamp',
    );
    expect(batcher.size).toBe(0);
    await batcher.destroy();
    expect(service.requests).toHaveLength(0);
  });
});
