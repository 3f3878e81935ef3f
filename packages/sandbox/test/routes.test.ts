import { ChurnRiskClient } from '@churn-risk/core';
import { createManualClock, createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFailure } from './helpers/service-failure.js';

let sandbox: Sandbox;
let client: ChurnRiskClient;

beforeAll(async () => {
  sandbox = await createSandbox({ clock: createManualClock() });
  client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxRetries: 0 });
});
afterAll(async () => {
  await sandbox.close();
});

describe('REST routes through ChurnRiskClient', () => {
  it('identify (204) creates a user whose risk is then readable; unknown users are 404', async () => {
    await expect(client.identify('alice/ä b', { plan: 'pro', mrr: 99 })).resolves.toBeUndefined();
    await expect(client.getRiskScore('alice/ä b')).resolves.toEqual({
      userId: 'alice/ä b',
      score: 0.35,
      tier: 'low',
      signals: ['no_activity'],
      recommendation: expect.any(String) as string,
    });
    const error = await serviceFailure(client.getRiskScore('nobody'));
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(error.requestId).toMatch(/^req_/);
  });

  it('identify merges traits', async () => {
    await client.identify('merge', { plan: 'free' });
    expect((await client.getRiskScore('merge')).signals).toContain('free_plan');
    await client.identify('merge', { mrr: 10 });
    expect((await client.getRiskScore('merge')).signals).toEqual([
      'no_activity',
      'free_plan',
      'low_mrr',
    ]);
  });

  it('track (202, accepted 1) and trackBulk (accepted n) create users and rescore them', async () => {
    await expect(client.track({ userId: 'bob', event: 'login' })).resolves.toEqual({ accepted: 1 });
    expect((await client.getRiskScore('bob')).score).toBe(0.1);
    const events = [
      { userId: 'bob', event: 'payment_failed' },
      { userId: 'carol', event: 'login', properties: { page: 'home', n: 1, ok: true, none: null } },
      { userId: 'bob', event: 'seat_removed', timestamp: '2024-12-31T23:00:00Z' },
    ];
    await expect(client.trackBulk(events)).resolves.toEqual({ accepted: 3 });
    expect(await client.getRiskScore('bob')).toMatchObject({
      score: 0.35,
      signals: ['payment_failed', 'seat_removed'],
    });
    expect((await client.getRiskScore('carol')).score).toBe(0.1);
  });

  it('lists at-risk users highest first, ties by userId, with threshold, plan, limit and offset', async () => {
    const local = await createSandbox({ clock: createManualClock() });
    const c = new ChurnRiskClient({ apiKey: local.apiKey, baseUrl: local.url, maxRetries: 0 });
    try {
      await c.identify('d', { plan: 'pro' }); // 0.35
      await c.identify('b', { plan: 'free' }); // 0.45
      await c.identify('a', { plan: 'free' }); // 0.45
      await c.trackBulk(
        ['payment_failed', 'payment_failed'].map((event) => ({ userId: 'c', event })),
      ); // 0.75
      await c.track({ userId: 'e', event: 'login' }); // 0.1
      const all = await c.getAtRiskUsers({ threshold: 0.3 });
      expect(all.users.map((u) => [u.userId, u.score])).toEqual([
        ['c', 0.75],
        ['a', 0.45],
        ['b', 0.45],
        ['d', 0.35],
      ]);
      expect(all).toMatchObject({ total: 4, offset: 0, limit: 50 });
      const defaults = await c.getAtRiskUsers();
      expect(defaults.users.map((u) => u.userId)).toEqual(['c']);
      expect(await c.getAtRiskUsers({ threshold: 0.45 })).toMatchObject({ total: 3 });
      const page = await c.getAtRiskUsers({ threshold: 0, limit: 2, offset: 1 });
      expect(page).toMatchObject({ total: 5, offset: 1, limit: 2 });
      expect(page.users.map((u) => u.userId)).toEqual(['a', 'b']);
      expect(
        (await c.getAtRiskUsers({ threshold: 0, plan: 'free' })).users.map((u) => u.userId),
      ).toEqual(['a', 'b']);
      const walked: string[] = [];
      for await (const user of c.getAllAtRiskUsers({ threshold: 0, pageSize: 2 }))
        walked.push(user.userId);
      expect(walked).toEqual(['c', 'a', 'b', 'd', 'e']);
    } finally {
      await local.close();
    }
  });

  it('watch (200 WatchedUser), replace, unwatch (204), unwatch again (404)', async () => {
    const watch = {
      threshold: 0.7,
      webhook: 'https://hooks.example.com/churn',
      cooldown: '24h',
    } as const;
    await expect(client.watch('w', watch)).resolves.toEqual({ userId: 'w', ...watch });
    await expect(client.watch('w', { ...watch, cooldown: '7d' })).resolves.toMatchObject({
      cooldown: '7d',
    });
    expect(sandbox.service.watches.get('w')).toMatchObject({
      cooldown: '7d',
      cooldownMs: 7 * 86_400_000,
    });
    await expect(client.unwatch('w')).resolves.toBeUndefined();
    expect(await serviceFailure(client.unwatch('w'))).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
  });

  it('answers 401 UNAUTHORIZED to a wrong API key', async () => {
    const wrong = new ChurnRiskClient({
      apiKey: 'sk_test_wrong',
      baseUrl: sandbox.url,
      maxRetries: 0,
    });
    expect(await serviceFailure(wrong.getRiskScore('alice'))).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
    });
    expect(await serviceFailure(wrong.track({ userId: 'x', event: 'login' }))).toMatchObject({
      status: 401,
    });
    expect(sandbox.service.users.get('x')).toBeUndefined();
  });

  it('answers 400 VALIDATION_ERROR with details for a body the client did not validate', async () => {
    // A client whose requests are altered in transit, as an older or foreign client would send them.
    const corrupting = new ChurnRiskClient({
      apiKey: sandbox.apiKey,
      baseUrl: sandbox.url,
      maxRetries: 0,
      fetch: (url, init) => fetch(url, { ...init, body: JSON.stringify({ userId: '', event: 7 }) }),
    });
    const error = await serviceFailure(corrupting.track({ userId: 'v', event: 'login' }));
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(error.details).toEqual([
      expect.objectContaining({ path: 'userId' }),
      expect.objectContaining({ path: 'event' }),
    ]);
  });

  it('answers 413 PAYLOAD_TOO_LARGE above maxBodyBytes', async () => {
    const small = await createSandbox({ maxBodyBytes: 1024 });
    try {
      const c = new ChurnRiskClient({ apiKey: small.apiKey, baseUrl: small.url, maxRetries: 0 });
      await c.identify('big', { name: 'x'.repeat(900) });
      const error = await serviceFailure(c.identify('big', { name: 'x'.repeat(2000) }));
      expect(error).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    } finally {
      await small.close();
    }
  });

  it('answers 429 RATE_LIMITED with Retry-After once a key exceeds the rate limit, until the window passes', async () => {
    const clock = createManualClock();
    const limited = await createSandbox({ clock, rateLimit: { max: 2, windowMs: 10_000 } });
    try {
      const c = new ChurnRiskClient({
        apiKey: limited.apiKey,
        baseUrl: limited.url,
        maxRetries: 0,
      });
      await c.identify('r', {});
      await c.getRiskScore('r');
      expect(await serviceFailure(c.getRiskScore('r'))).toMatchObject({
        status: 429,
        code: 'RATE_LIMITED',
      });
      clock.advance(4_000);
      const response = await fetch(`${limited.url}/v1/users/r/risk`, {
        headers: { authorization: `Bearer ${limited.apiKey}` },
      });
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('6');
      clock.advance(6_000);
      await expect(c.getRiskScore('r')).resolves.toMatchObject({ userId: 'r' });
    } finally {
      await limited.close();
    }
  });
});
