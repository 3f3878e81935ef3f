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

/** Accepts a bulk request after a short pause, tracking how many are open at once. */
const accept: Handler = async (request) => {
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  await new Promise((resolve) => setTimeout(resolve, 5));
  inFlight--;
  return { status: 202, body: { accepted: (request.json as { events: unknown[] }).events.length } };
};

beforeEach(async () => {
  inFlight = 0;
  maxInFlight = 0;
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

  it('keeps the batch on 401 (a key problem, not the events) and resends it later', async () => {
    const { batcher, errors, next } = batcherWith({ maxSize: 2 });
    service.reply({ status: 401 });
    for (const item of events(2)) batcher.push(item);
    await next();
    expect(errors[0]).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(errors[0]?.message).not.toContain(API_KEY);
    expect(batcher.size).toBe(2);
    await expect(batcher.flush()).resolves.toBe(2);
    expect(batches().at(-1)).toEqual(['u0', 'u1']);
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
