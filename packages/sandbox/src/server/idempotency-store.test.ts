import { describe, expect, it } from 'vitest';
import { createManualClock } from '../clock/manual-clock.js';
import { createIdempotencyStore, type RequestFingerprint } from './idempotency-store.js';

const HOUR = 3_600_000;
const request = (path = '/v1/events', bodyHash = 'h'): RequestFingerprint => ({
  method: 'POST',
  path,
  bodyHash,
});
const answer = (body: string): { status: number; contentType: string; body: string } => ({
  status: 202,
  contentType: 'application/json',
  body,
});

describe('idempotency store', () => {
  it('replays only for the same method, path and body hash', async () => {
    const store = createIdempotencyStore(createManualClock());
    expect(store.claim('k', request())).toEqual({ kind: 'first' });
    const waiting = store.claim('k', request());
    expect(store.claim('k', request('/v1/events/bulk'))).toEqual({
      kind: 'reused',
      first: request(),
    });
    store.complete('k', answer('{"accepted":1}'));
    expect(waiting.kind).toBe('replay');
    if (waiting.kind === 'replay') expect(await waiting.answer).toEqual(answer('{"accepted":1}'));
    expect(store.claim('k', { ...request(), method: 'PUT' }).kind).toBe('reused');
    expect(store.claim('k', request('/v1/events', 'other')).kind).toBe('reused');
    const replay = store.claim('k', request());
    expect(replay.kind).toBe('replay');
    if (replay.kind === 'replay') expect(await replay.answer).toEqual(answer('{"accepted":1}'));
  });

  it('drops expired answers on the next insert, and lets an expired key be used afresh', () => {
    const clock = createManualClock();
    const store = createIdempotencyStore(clock, { ttlMs: 24 * HOUR });
    for (const key of ['a', 'b', 'c']) {
      store.claim(key, request());
      store.complete(key, answer(key));
      clock.advance(HOUR);
    }
    expect(store.size()).toBe(3);
    clock.advance(22 * HOUR); // 'a' is 25 h old, 'b' 24 h, 'c' 23 h
    store.claim('d', request());
    expect(store.size()).toBe(2); // 'c' and the pending 'd'
    expect(store.claim('c', request('/elsewhere')).kind).toBe('reused');
    // An expired key is free again, whatever it was used for.
    expect(store.claim('a', request('/elsewhere'))).toEqual({ kind: 'first' });
  });

  it('keeps at most maxEntries keys, forgetting the oldest answers but never a pending key', () => {
    const clock = createManualClock();
    const store = createIdempotencyStore(clock, { maxEntries: 3 });
    store.claim('pending', request());
    for (const key of ['a', 'b', 'c', 'd']) {
      store.claim(key, request());
      store.complete(key, answer(key));
      expect(store.size()).toBeLessThanOrEqual(3);
    }
    expect(store.size()).toBe(3);
    // 'a' and 'b' were forgotten: they can be claimed for another request.
    expect(store.claim('a', request('/other'))).toEqual({ kind: 'first' });
    expect(store.claim('pending', request('/other')).kind).toBe('reused');
    expect(store.claim('d', request('/other')).kind).toBe('reused');
  });

  it('orders answers by when they were answered, not claimed', () => {
    const clock = createManualClock();
    const store = createIdempotencyStore(clock, { ttlMs: 10 * HOUR });
    store.claim('slow', request());
    store.claim('fast', request());
    store.complete('fast', answer('fast'));
    clock.advance(5 * HOUR);
    store.complete('slow', answer('slow'));
    clock.advance(6 * HOUR); // 'fast' is 11 h old, 'slow' 6 h
    store.claim('new', request());
    expect(store.claim('fast', request('/other')).kind).toBe('first');
    expect(store.claim('slow', request('/other')).kind).toBe('reused');
  });
});
