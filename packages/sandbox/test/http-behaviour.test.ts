import { createManualClock, createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sandbox: Sandbox;
let headers: Record<string, string>;

beforeAll(async () => {
  sandbox = await createSandbox({ clock: createManualClock(), apiKey: 'sk_test_http' });
  headers = { authorization: 'Bearer sk_test_http', 'content-type': 'application/json' };
});
afterAll(async () => {
  await sandbox.close();
});

const call = (path: string, init: RequestInit = {}): Promise<Response> =>
  fetch(`${sandbox.url}${path}`, {
    ...init,
    headers: { ...headers, ...(init.headers as Record<string, string>) },
  });
const post = (path: string, body: unknown, extra: Record<string, string> = {}): Promise<Response> =>
  call(path, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: extra,
  });

describe('HTTP behaviour', () => {
  it('replays the first answer to a repeated Idempotency-Key without applying the request twice', async () => {
    const key = { 'idempotency-key': '5f0c7c1e-3c55-4a53-9f0c-2f9e6a1d2b11' };
    const first = await post('/v1/events', { userId: 'idem', event: 'payment_failed' }, key);
    const second = await post('/v1/events', { userId: 'idem', event: 'payment_failed' }, key);
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(await second.json()).toEqual(await first.json());
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(sandbox.service.users.get('idem')!.events).toHaveLength(1);
    expect((await (await call('/v1/users/idem/risk')).json()) as object).toMatchObject({
      score: 0.55,
    });
    const other = await post(
      '/v1/events',
      { userId: 'idem', event: 'payment_failed' },
      { 'idempotency-key': 'another' },
    );
    expect(other.status).toBe(202);
    expect(sandbox.service.users.get('idem')!.events).toHaveLength(2);
  });

  it('replays a 204 and an error answer too', async () => {
    const key = { 'idempotency-key': 'k-204' };
    expect((await post('/v1/users/t/traits', { plan: 'pro' }, key)).status).toBe(204);
    expect((await post('/v1/users/t/traits', { plan: 'team' })).status).toBe(204);
    const replay = await post('/v1/users/t/traits', { plan: 'pro' }, key);
    expect(replay.status).toBe(204);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe('');
    expect(sandbox.service.users.get('t')!.traits).toEqual({ plan: 'team' });
    const bad = { 'idempotency-key': 'k-400' };
    const firstBad = await post('/v1/events', { userId: '' }, bad);
    const secondBad = await post('/v1/events', { userId: '' }, bad);
    expect([firstBad.status, secondBad.status]).toEqual([400, 400]);
    expect(secondBad.headers.get('idempotent-replayed')).toBe('true');
    expect(await secondBad.json()).toEqual(await firstBad.json());
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED to a key reused on another route or with another body, running nothing', async () => {
    const key = { 'idempotency-key': 'k-reuse' };
    const first = await post('/v1/events', { userId: 'reuse', event: 'login' }, key);
    expect(first.status).toBe(202);
    const attempts = await Promise.all([
      post('/v1/users/reuse/traits', { plan: 'pro' }, key),
      call('/v1/users/reuse/watch', {
        method: 'PUT',
        body: JSON.stringify({ threshold: 0.7, webhook: 'https://example.com/h', cooldown: '1d' }),
        headers: key,
      }),
      call('/v1/users/reuse/watch', { method: 'DELETE', headers: key }),
      post('/v1/events/bulk', { events: [{ userId: 'reuse', event: 'login' }] }, key),
    ]);
    for (const response of attempts) {
      expect(response.status).toBe(422);
      expect(response.headers.get('idempotent-replayed')).toBeNull();
      expect(await response.json()).toEqual({
        error: {
          code: 'IDEMPOTENCY_KEY_REUSED',
          message: expect.stringContaining('already used for POST /v1/events;') as string,
        },
      });
    }
    const otherBody = await post('/v1/events', { userId: 'reuse', event: 'logout' }, key);
    expect(otherBody.status).toBe(422);
    expect(((await otherBody.json()) as { error: { message: string } }).error.message).toMatch(
      /already used with a different request body/,
    );
    const user = sandbox.service.users.get('reuse')!;
    expect(user.traits).toEqual({});
    expect(user.events.map((e) => e.event)).toEqual(['login']);
    expect(sandbox.service.watches.get('reuse')).toBeUndefined();
    // The first request, sent again, is still replayed.
    const again = await post('/v1/events', { userId: 'reuse', event: 'login' }, key);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(sandbox.service.users.get('reuse')!.events).toHaveLength(1);
  });

  it('puts an x-request-id on every answer, errors included', async () => {
    const answers = await Promise.all([
      call('/v1/at-risk'),
      call('/v1/users/none/risk'),
      call('/v1/nope'),
      fetch(`${sandbox.url}/v1/at-risk`),
      post('/v1/events', '{not json'),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 404, 404, 401, 400]);
    const ids = answers.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers the documented error body', async () => {
    const response = await fetch(`${sandbox.url}/v1/at-risk`, {
      headers: { authorization: 'Bearer wrong' },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'Invalid API key.' },
    });
    const notFound = await call('/v1/users/none/risk');
    expect(await notFound.json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'No user "none".' },
    });
  });

  it.each([
    ['malformed JSON', '/v1/events', '{"userId":'],
    ['a missing event name', '/v1/events', { userId: 'u' }],
    ['a bad timestamp', '/v1/events', { userId: 'u', event: 'e', timestamp: 'yesterday' }],
    ['a nested property', '/v1/events', { userId: 'u', event: 'e', properties: { a: { b: 1 } } }],
    ['an empty bulk', '/v1/events/bulk', { events: [] }],
    [
      '501 bulk events',
      '/v1/events/bulk',
      { events: Array.from({ length: 501 }, () => ({ userId: 'u', event: 'e' })) },
    ],
    ['a non-scalar trait', '/v1/users/u/traits', { mrr: 'lots' }],
    ['a 257-character userId', `/v1/users/${'x'.repeat(257)}/traits`, {}],
  ])('answers 400 VALIDATION_ERROR to %s', async (_name, path, body) => {
    const response = await post(path, body);
    expect(response.status).toBe(400);
    const json = (await response.json()) as { error: { code: string } };
    expect(json.error.code).toBe('VALIDATION_ERROR');
    expect(sandbox.service.users.get('u')).toBeUndefined();
  });

  it.each([
    'threshold=abc',
    'threshold=1.5',
    'limit=0',
    'limit=201',
    'limit=2.5',
    'offset=-1',
    'plan=',
    'threshold=0x1',
    'threshold=1e-1',
    'threshold=.5',
    'threshold=0.',
    'threshold=+0.5',
    'threshold=%200.5',
    'threshold=',
    'threshold=0.5&threshold=0.6',
    'limit=1e2',
    'limit=0x10',
    'limit=10.0',
    'limit=%2010',
    'offset=1e1',
    'offset=0b1',
    'offset=',
  ])('answers 400 to the at-risk query %s', async (query) => {
    const response = await call(`/v1/at-risk?${query}`);
    expect(response.status).toBe(400);
    const json = (await response.json()) as {
      error: { code: string; details: { path: string }[] };
    };
    expect(json.error.code).toBe('VALIDATION_ERROR');
    expect(json.error.details[0]!.path).toBe(query.split('=')[0]);
  });

  it('accepts plain decimal numbers in the at-risk query', async () => {
    const response = await call('/v1/at-risk?threshold=0.25&limit=007&offset=0');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ limit: 7, offset: 0 });
    expect((await call('/v1/at-risk?threshold=1&limit=200&offset=10')).status).toBe(200);
  });

  it.each([
    [
      'http to a public host',
      { threshold: 0.7, webhook: 'http://example.com/hook', cooldown: '24h' },
    ],
    ['a bad cooldown', { threshold: 0.7, webhook: 'https://example.com/hook', cooldown: '024h' }],
    [
      'a threshold above 1',
      { threshold: 1.2, webhook: 'https://example.com/hook', cooldown: '1d' },
    ],
  ])('rejects a watch with %s', async (_name, body) => {
    const response = await call('/v1/users/u/watch', { method: 'PUT', body: JSON.stringify(body) });
    expect(response.status).toBe(400);
    expect(sandbox.service.watches.get('u')).toBeUndefined();
  });

  it('accepts a 256-character userId, percent-encoded', async () => {
    const userId = '😀'.repeat(128);
    expect(userId).toHaveLength(256);
    const response = await post(`/v1/users/${encodeURIComponent(userId)}/traits`, { plan: 'pro' });
    expect(response.status).toBe(204);
    expect(sandbox.service.users.get(userId)).toBeDefined();
  });

  it('accepts an http webhook on a loopback host', async () => {
    const body = { threshold: 0.7, webhook: 'http://localhost:3000/hook', cooldown: '24h' };
    const response = await call('/v1/users/loop/watch', {
      method: 'PUT',
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ userId: 'loop', ...body });
  });
});
