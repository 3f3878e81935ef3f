import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createQueueReceiver,
  createReceiver,
  defaultBackoffMs,
  RECEIVER_DEFAULTS,
} from '@churn-risk/core';
import {
  createDurableQueue,
  createMemoryQueue,
  createMemoryStore,
  RENAMED_OPTIONS,
  refuseUnknownOptions,
  type DedupeStore,
} from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';

// One name per meaning: the de-duplication TTL is `dedupeTtlMs` in every create* function, one map
// of old names is refused with a hint everywhere, and `backoffMs` counts tries as `shouldRetry`
// and `context.attempt` do (0 for the first try).

const SECRET = 'whsec_dedupe_ttl';
const loose = (options: Record<string, unknown>): never => options as never;

function recordingStore(): { store: DedupeStore; ttls: number[] } {
  const ttls: number[] = [];
  const store: DedupeStore = {
    claim: (_key, ttlMs) => {
      ttls.push(ttlMs);
      return true;
    },
    release: () => undefined,
  };
  return { store, ttls };
}

describe('dedupeTtlMs', () => {
  it('is how long createReceiver and createMemoryQueue claim an identity, 72 hours by default', async () => {
    for (const [options, ttl] of [
      [{}, 72 * 3_600_000],
      [{ dedupeTtlMs: 60_000 }, 60_000],
    ] as const) {
      const { store, ttls } = recordingStore();
      const receiver = createReceiver({ secret: SECRET, dedupe: { store }, ...options });
      const request = { method: 'POST', ...createTestDelivery({}, { secret: SECRET }) };
      expect((await receiver.handle(request)).status).toBe(202);
      expect(ttls).toEqual([ttl]);
      await receiver.close();
    }
    expect(RECEIVER_DEFAULTS.dedupeTtlMs).toBe(72 * 3_600_000);
    const { store, ttls } = recordingStore();
    const queue = createMemoryQueue({ dedupe: { store }, dedupeTtlMs: 5_000 });
    const receiver = createReceiver({ secret: SECRET, queue });
    await receiver.handle({ method: 'POST', ...createTestDelivery({}, { secret: SECRET }) });
    expect(ttls).toEqual([5_000]);
    await receiver.close();
  });

  it('forgets an identity once it ends, in the default in-memory store', async () => {
    let now = Date.now();
    const receiver = createReceiver({ secret: SECRET, dedupeTtlMs: 1_000, now: () => now });
    const request = { method: 'POST', ...createTestDelivery({}, { secret: SECRET }) };
    expect((await receiver.handle(request)).body).toBe('{"received":true}');
    now += 999;
    expect((await receiver.handle(request)).body).toContain('"duplicate":true');
    now += 2;
    expect((await receiver.handle(request)).body).toBe('{"received":true}');
    await receiver.close();
  });

  it('refuses dedupe: { ttlMs } with a TypeError naming dedupeTtlMs, in every create*', () => {
    const nested = loose({ secret: SECRET, dedupe: { ttlMs: 1_000 } });
    expect(() => createReceiver(nested)).toThrow(TypeError);
    expect(() => createReceiver(nested)).toThrow(/"ttlMs" \(.*dedupeTtlMs\)/);
    expect(() => createMemoryQueue(loose({ dedupe: { ttlMs: 1_000 } }))).toThrow(/dedupeTtlMs/);
    expect(() => createDurableQueue(createMemoryStore(), loose({ ttlMs: 1_000 }))).toThrow(
      /"ttlMs" \(.*dedupeTtlMs\)/,
    );
  });

  it('is a whole number of at least 1, and only for the in-memory queue that keeps identities', () => {
    expect(() => createReceiver({ secret: SECRET, dedupeTtlMs: 0 })).toThrow(/dedupeTtlMs/);
    expect(() => createReceiver({ secret: SECRET, dedupeTtlMs: 1.5 })).toThrow(TypeError);
    expect(() => createReceiver({ secret: SECRET, dedupe: false, dedupeTtlMs: 1_000 })).toThrow(
      /dedupeTtlMs has no use with dedupe: false/,
    );
    const queue = createDurableQueue(createMemoryStore());
    expect(() => createReceiver({ secret: SECRET, queue, dedupeTtlMs: 1_000 })).toThrow(
      /dedupeTtlMs .*configure the in-memory queue/,
    );
    expect(() => createQueueReceiver(loose({ secret: SECRET, queue, dedupeTtlMs: 1 }))).toThrow(
      TypeError,
    );
  });
});

describe('RENAMED_OPTIONS', () => {
  it('is the one map of old names, with the option each became', () => {
    expect(Object.isFrozen(RENAMED_OPTIONS)).toBe(true);
    expect(RENAMED_OPTIONS).toMatchObject({
      lockDurationMs: expect.stringContaining('leaseMs') as unknown,
      stalledIntervalMs: expect.stringContaining('reclaimIntervalMs') as unknown,
      ttlMs: expect.stringContaining('dedupeTtlMs') as unknown,
    });
    for (const [old, hint] of Object.entries(RENAMED_OPTIONS)) {
      expect(() => refuseUnknownOptions('f', { [old]: 1 }, ['leaseMs'], RENAMED_OPTIONS)).toThrow(
        `f does not know the option "${old}" (${hint}).`,
      );
      expect(() => createDurableQueue(createMemoryStore(), loose({ [old]: 1 }))).toThrow(
        `createDurableQueue does not know the option "${old}" (${hint}).`,
      );
    }
  });
});

describe('retries.backoffMs', () => {
  afterEach(() => void vi.useRealTimers());

  it('keeps the default delays, 1 s, 2 s and 4 s after tries 0, 1 and 2', async () => {
    expect([0, 1, 2].map(defaultBackoffMs)).toEqual([1_000, 2_000, 4_000]);
    vi.useFakeTimers();
    const start = Date.now();
    const receiver = createReceiver({ secret: SECRET });
    const at: [number, number][] = [];
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      at.push([attempt, Date.now() - start]);
      throw new Error('CRM down');
    });
    receiver.onError(() => undefined);
    await receiver.handle({ method: 'POST', ...createTestDelivery({}, { secret: SECRET }) });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(at).toEqual([
      [0, 0],
      [1, 1_000],
      [2, 3_000],
      [3, 7_000],
    ]);
    await receiver.close();
  });

  it('is told the try that just failed, as shouldRetry and context.attempt are', async () => {
    vi.useFakeTimers();
    const told: string[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      retries: {
        retries: 2,
        backoffMs: (attempt) => {
          told.push(`backoffMs(${String(attempt)})`);
          return 100 * (attempt + 1);
        },
        shouldRetry: (_error, attempt) => {
          told.push(`shouldRetry(${String(attempt)})`);
          return true;
        },
      },
    });
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      told.push(`attempt ${String(attempt)}`);
      throw new Error('CRM down');
    });
    receiver.onError(() => undefined);
    await receiver.handle({ method: 'POST', ...createTestDelivery({}, { secret: SECRET }) });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(told).toEqual([
      'attempt 0',
      'shouldRetry(0)',
      'backoffMs(0)',
      'attempt 1',
      'shouldRetry(1)',
      'backoffMs(1)',
      'attempt 2',
    ]);
    await receiver.close();
  });
});
