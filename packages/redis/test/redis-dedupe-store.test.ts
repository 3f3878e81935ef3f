import { createReceiver } from '@churn-risk/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisDedupeStore, type RedisDedupeStore } from '../src/index.js';
import { startRedisServer, type RedisServer } from '../src/testing.js';
import { deliveryOf, makeAlert, SECRET } from './helpers.js';

describe('createRedisDedupeStore', () => {
  let redis: RedisServer;
  const stores: RedisDedupeStore[] = [];
  const storeOn = (url: string, prefix = 'dd'): RedisDedupeStore => {
    const store = createRedisDedupeStore({ connection: url, prefix });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await redis.stop();
    redis.cleanup();
  });

  it('claims once across instances, with the time to live, and a release frees only its own claim', async () => {
    const a = storeOn(redis.url);
    const b = storeOn(redis.url);
    expect(await a.claim('u1:t', 60_000)).toBe(true);
    expect(await b.claim('u1:t', 60_000)).toBe(false);
    await b.release('u1:t'); // not b's claim: kept
    expect(await b.claim('u1:t', 60_000)).toBe(false);
    await a.release('u1:t');
    expect(await b.claim('u1:t', 60_000)).toBe(true);

    const probe = new Redis(redis.url);
    try {
      const ttl = await probe.pttl('dd:dedupe:u1:t');
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      probe.disconnect();
    }
    expect(await a.claim('short', 50)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await b.claim('short', 50)).toBe(true); // expired
  });

  it('makes a redelivery to another in-process receiver a duplicate', async () => {
    const runs: string[] = [];
    const make = (name: string) => {
      const receiver = createReceiver({
        secret: SECRET,
        dedupe: { store: storeOn(redis.url, 'shared') },
      });
      receiver.on('churn_risk_alert', () => {
        runs.push(name);
      });
      return receiver;
    };
    const one = make('one');
    const two = make('two');
    const alert = makeAlert();
    expect(JSON.parse((await one.handle(deliveryOf(alert))).body)).toEqual({ received: true });
    const again = await two.handle(deliveryOf(alert));
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
    await Promise.all([one.close(), two.close()]);
    expect(runs).toEqual(['one']);
  });

  it('answers 503 OVERLOADED when Redis is unreachable, so the sender retries', async () => {
    const dead = createRedisDedupeStore({
      connection: 'redis://127.0.0.1:1',
      connectTimeoutMs: 200,
    });
    stores.push(dead);
    const receiver = createReceiver({ secret: SECRET, dedupe: { store: dead } });
    receiver.on('churn_risk_alert', () => undefined);
    const result = await receiver.handle(deliveryOf(makeAlert()));
    expect(result.status).toBe(503);
    expect(JSON.parse(result.body).error.code).toBe('OVERLOADED');
    await receiver.close();
  });

  it('rejects a bad connection or prefix with a TypeError', () => {
    expect(() => createRedisDedupeStore({ connection: 'http://x' })).toThrow(TypeError);
    expect(() => createRedisDedupeStore({ connection: redis.url, prefix: 'a b' })).toThrow(
      TypeError,
    );
  });
});
