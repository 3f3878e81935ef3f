import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChurnRiskClient } from '@churn-risk/core';
import { PRODUCTION_BASE_URL, STAGING_BASE_URL } from '@churn-risk/core/wire';
import {
  API_KEY,
  startFakeService,
  type FakeService,
  type RecordedRequest,
} from './fake-service.test-util.js';
import { USER_AGENT } from '../version.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const score = {
  userId: 'u1',
  score: 0.82,
  tier: 'high',
  signals: ['inactive_14d'],
  recommendation: 'Call them',
};

let service: FakeService;
let client: ChurnRiskClient;

beforeEach(async () => {
  service = await startFakeService();
  client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url });
});
afterEach(() => service.close());

function only(): RecordedRequest {
  expect(service.requests).toHaveLength(1);
  return service.requests[0]!;
}

function expectCommonHeaders(request: RecordedRequest, withBody: boolean): void {
  expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
  expect(request.headers.accept).toBe('application/json');
  expect(request.headers['user-agent']).toBe(USER_AGENT);
  if (withBody) {
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['idempotency-key']).toMatch(UUID);
  } else {
    expect(request.headers['idempotency-key']).toBeUndefined();
    expect(request.body).toBe('');
  }
}

describe('routes, headers and bodies', () => {
  it('identify: POST /v1/users/{userId}/traits with the traits, 204', async () => {
    service.reply({ status: 204 });
    const traits = { plan: 'pro', mrr: 99, beta: true, referrer: null };
    await expect(client.identify('u1', traits)).resolves.toBeUndefined();
    const request = only();
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/users/u1/traits');
    expect(request.json).toEqual(traits);
    expectCommonHeaders(request, true);
  });

  it('track: POST /v1/events with the item, 202 {"accepted":1}', async () => {
    service.reply({ status: 202, body: { accepted: 1 } });
    const item = {
      userId: 'u1',
      event: 'login',
      properties: { device: 'ios' },
      timestamp: '2025-01-02T03:04:05Z',
    };
    await expect(client.track(item)).resolves.toEqual({ accepted: 1 });
    const request = only();
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/events');
    expect(request.json).toEqual(item);
    expectCommonHeaders(request, true);
  });

  it('trackBulk: POST /v1/events/bulk {"events":[...]}, split into requests of at most 500', async () => {
    service.reply(...[500, 500, 201].map((n) => ({ status: 202, body: { accepted: n } })));
    const items = Array.from({ length: 1201 }, (_, i) => ({ userId: `u${i}`, event: 'login' }));
    await expect(client.trackBulk(items)).resolves.toEqual({ accepted: 1201 });
    expect(service.requests.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/v1/events/bulk'],
      ['POST', '/v1/events/bulk'],
      ['POST', '/v1/events/bulk'],
    ]);
    const sent = service.requests.map((r) => (r.json as { events: { userId: string }[] }).events);
    expect(sent.map((events) => events.length)).toEqual([500, 500, 201]);
    expect(sent.flat().map((e) => e.userId)).toEqual(items.map((i) => i.userId));
    const keys = service.requests.map((r) => r.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(3);
    for (const request of service.requests) expectCommonHeaders(request, true);
  });

  it('getRiskScore: GET /v1/users/{userId}/risk, 200 RiskScore', async () => {
    service.reply({ status: 200, body: score });
    await expect(client.getRiskScore('u1')).resolves.toEqual(score);
    const request = only();
    expect([request.method, request.url]).toEqual(['GET', '/v1/users/u1/risk']);
    expectCommonHeaders(request, false);
  });

  it('percent-encodes userId in paths', async () => {
    service.reply({ status: 200, body: { ...score, userId: 'a/b c?#é' } });
    await client.getRiskScore('a/b c?#é');
    expect(only().url).toBe('/v1/users/a%2Fb%20c%3F%23%C3%A9/risk');
  });

  it('getAtRiskUsers: GET /v1/at-risk with threshold, plan, limit, offset', async () => {
    const page = { users: [{ ...score }], total: 1, offset: 10, limit: 20 };
    service.reply({ status: 200, body: page });
    await expect(
      client.getAtRiskUsers({ threshold: 0.7, plan: 'pro', limit: 20, offset: 10 }),
    ).resolves.toEqual(page);
    const request = only();
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/v1/at-risk');
    expect(Object.fromEntries(request.query)).toEqual({
      threshold: '0.7',
      plan: 'pro',
      limit: '20',
      offset: '10',
    });
    expectCommonHeaders(request, false);
  });

  it('getAtRiskUsers sends the defaults (threshold 0.5, limit 50, offset 0) and no plan', async () => {
    service.reply({ status: 200, body: { users: [], total: 0, offset: 0, limit: 50 } });
    await client.getAtRiskUsers();
    expect(Object.fromEntries(only().query)).toEqual({
      threshold: '0.5',
      limit: '50',
      offset: '0',
    });
  });

  it('watch: PUT /v1/users/{userId}/watch with WatchOptions, 200 WatchedUser', async () => {
    const watch = {
      threshold: 0.6,
      webhook: 'https://hooks.example.com/churn',
      cooldown: '24h',
    } as const;
    service.reply({ status: 200, body: { userId: 'u1', ...watch } });
    await expect(client.watch('u1', watch)).resolves.toEqual({ userId: 'u1', ...watch });
    const request = only();
    expect([request.method, request.url]).toEqual(['PUT', '/v1/users/u1/watch']);
    expect(request.json).toEqual(watch);
    expectCommonHeaders(request, true);
  });

  it('watch accepts an http:// loopback webhook when the base URL is loopback (the sandbox)', async () => {
    const watch = {
      threshold: 0.6,
      webhook: 'http://localhost:3000/hook',
      cooldown: '2d',
    } as const;
    service.reply({ status: 200, body: { userId: 'u1', ...watch } });
    await expect(client.watch('u1', watch)).resolves.toMatchObject({ webhook: watch.webhook });
    expect(only().json).toEqual(watch);
  });

  it('unwatch: DELETE /v1/users/{userId}/watch, 204', async () => {
    service.reply({ status: 204 });
    await expect(client.unwatch('u1')).resolves.toBeUndefined();
    const request = only();
    expect([request.method, request.url]).toEqual(['DELETE', '/v1/users/u1/watch']);
    expectCommonHeaders(request, false);
  });

  it('keeps fields a newer service adds to a response', async () => {
    service.reply({ status: 200, body: { ...score, trend: 'rising' } });
    await expect(client.getRiskScore('u1')).resolves.toMatchObject({ trend: 'rising' });
  });
});

describe('base URL', () => {
  it('production by default, staging by env, baseUrl wins and loses its trailing slash', () => {
    expect(new ChurnRiskClient({ apiKey: 'k' }).baseUrl).toBe(PRODUCTION_BASE_URL);
    expect(new ChurnRiskClient({ apiKey: 'k', env: 'production' }).baseUrl).toBe(
      'https://api.churn-risk.example',
    );
    expect(new ChurnRiskClient({ apiKey: 'k', env: 'staging' }).baseUrl).toBe(STAGING_BASE_URL);
    expect(STAGING_BASE_URL).toBe('https://api.staging.churn-risk.example');
    expect(
      new ChurnRiskClient({ apiKey: 'k', env: 'staging', baseUrl: 'http://127.0.0.1:9/' }).baseUrl,
    ).toBe('http://127.0.0.1:9');
  });

  it('keeps a path prefix of baseUrl', async () => {
    const prefixed = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: `${service.url}/api/` });
    service.reply({ status: 204 });
    await prefixed.unwatch('u1');
    expect(only().url).toBe('/api/v1/users/u1/watch');
  });
});

describe('hooks', () => {
  it('onRequest may add headers and never sees the API key; onResponse gets status, attempt, durationMs', async () => {
    const seen: unknown[] = [];
    const hooked = new ChurnRiskClient({
      apiKey: API_KEY,
      baseUrl: service.url,
      onRequest: (context) => {
        seen.push(structuredClone(context));
        context.headers['x-trace-id'] = 'trace-1';
      },
      onResponse: (context) => {
        seen.push(context);
      },
    });
    service.reply({ status: 202, body: { accepted: 1 } });
    await hooked.track({ userId: 'u1', event: 'login' });
    expect(only().headers['x-trace-id']).toBe('trace-1');
    expect(only().headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen).toHaveLength(2);
    const [request, response] = seen as [Record<string, unknown>, Record<string, unknown>];
    expect(request).toMatchObject({
      method: 'POST',
      url: `${service.url}/v1/events`,
      body: { userId: 'u1', event: 'login' },
    });
    expect(JSON.stringify(request)).not.toContain(API_KEY);
    expect(response).toMatchObject({
      method: 'POST',
      url: `${service.url}/v1/events`,
      status: 202,
      attempt: 0,
    });
    expect(response.durationMs).toEqual(expect.any(Number));
    expect(response.durationMs as number).toBeGreaterThanOrEqual(0);
  });
});

describe('{ idempotencyKey } on the calls that write', () => {
  it('sends the key given; trackBulk numbers its later requests', async () => {
    service.reply({ status: 204 }, { status: 202, body: { accepted: 1 } });
    const key = 'user_1:2026-11-28T01:00:00.000Z/crm';
    await client.identify('u1', { plan: 'pro' }, { idempotencyKey: key });
    await client.track({ userId: 'u1', event: 'login' }, { idempotencyKey: `${key}-t` });
    expect(service.requests.map((r) => r.headers['idempotency-key'])).toEqual([key, `${key}-t`]);

    service.requests.length = 0;
    service.reply(...[500, 500, 1].map((n) => ({ status: 202, body: { accepted: n } })));
    const items = Array.from({ length: 1001 }, (_, i) => ({ userId: `u${i}`, event: 'login' }));
    await client.trackBulk(items, { idempotencyKey: key });
    expect(service.requests.map((r) => r.headers['idempotency-key'])).toEqual([
      key,
      `${key}/1`,
      `${key}/2`,
    ]);
  });

  it('refuses a key that is no header value, before any request', async () => {
    for (const idempotencyKey of ['', 'a b', 'ü', 'x'.repeat(4097)]) {
      await expect(
        client.identify('u1', { plan: 'pro' }, { idempotencyKey }),
      ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    expect(service.requests).toHaveLength(0);
  });
});
