import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChurnRiskClient, type ClientOptions, type ResponseContext } from '@churn-risk/core';
import { abortableSleep } from './abortable-sleep.js';
import {
  API_KEY,
  recordingSleep,
  startFakeService,
  type FakeService,
} from './fake-service.test-util.js';

let service: FakeService;

beforeEach(async () => {
  service = await startFakeService();
});
afterEach(() => service.close());

const accepted = { status: 202, body: { accepted: 1 } };
const item = { userId: 'u1', event: 'login' };

function makeClient(options: Partial<ClientOptions> = {}, random = (): number => 0.5) {
  const recorder = recordingSleep();
  const client = new ChurnRiskClient(
    { apiKey: API_KEY, baseUrl: service.url, ...options },
    { sleep: recorder.sleep, random, now: () => Date.parse('Wed, 21 Oct 2015 07:28:00 GMT') },
  );
  return { client, delays: recorder.delays };
}

function keys(): (string | string[] | undefined)[] {
  return service.requests.map((r) => r.headers['idempotency-key']);
}

describe('retries', () => {
  it.each([
    ['500', { status: 500 }],
    ['502', { status: 502 }],
    ['503', { status: 503, body: { error: { code: 'MAINTENANCE', message: 'down' } } }],
    ['504', { status: 504 }],
    ['429', { status: 429 }],
    ['408', { status: 408 }],
    ['a destroyed socket', { destroy: true as const }],
  ])('retries after %s with the same idempotency key', async (_name, failure) => {
    const responses: ResponseContext[] = [];
    const { client } = makeClient({ onResponse: (c) => void responses.push(c) });
    service.reply(failure, failure, accepted);
    await expect(client.track(item)).resolves.toEqual({ accepted: 1 });
    expect(service.requests).toHaveLength(3);
    expect(new Set(keys()).size).toBe(1);
    expect(keys()[0]).toEqual(expect.any(String));
    expect(service.requests.every((r) => r.body === service.requests[0]!.body)).toBe(true);
    expect(responses.at(-1)).toMatchObject({ status: 202, attempt: 2 });
  });

  it('retries an attempt past its time-out, each attempt with its own time-out', async () => {
    const { client } = makeClient({ timeout: 100 });
    service.reply({ hang: true }, { hang: true }, accepted);
    await expect(client.track(item)).resolves.toEqual({ accepted: 1 });
    expect(service.requests).toHaveLength(3);
    expect(new Set(keys()).size).toBe(1);
  });

  it('backs off 500, 1000, 2000 ms (times the random factor) and gives up after maxRetries', async () => {
    const { client, delays } = makeClient({}, () => 0.5);
    service.reply({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }, accepted);
    await expect(client.track(item)).rejects.toMatchObject({ code: 'SERVER_ERROR', status: 500 });
    expect(service.requests).toHaveLength(4);
    expect(delays).toEqual([437.5, 875, 1750].map(Math.round));
  });

  it('caps the backoff at 8000 ms', async () => {
    const { client, delays } = makeClient({ maxRetries: 6 }, () => 0.999_999_9);
    service.reply(...Array.from({ length: 6 }, () => ({ status: 503 })), accepted);
    await client.track(item);
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it('onRequest runs before every attempt, onResponse after every response with attempt 0, 1, 2', async () => {
    const events: string[] = [];
    const { client } = makeClient({
      onRequest: (c) =>
        void events.push(`request ${c.headers['idempotency-key'] === undefined ? '-' : 'key'}`),
      onResponse: (c) => void events.push(`response ${c.status} #${c.attempt}`),
    });
    service.reply({ status: 503 }, { destroy: true }, { status: 429 }, accepted);
    await client.track(item);
    expect(events).toEqual([
      'request key',
      'response 503 #0',
      'request key',
      'request key',
      'response 429 #2',
      'request key',
      'response 202 #3',
    ]);
  });

  it('maxRetries 0 sends once', async () => {
    const { client } = makeClient({ maxRetries: 0 });
    service.reply({ status: 503 }, accepted);
    await expect(client.track(item)).rejects.toMatchObject({ code: 'SERVER_ERROR' });
    expect(service.requests).toHaveLength(1);
  });

  it.each([400, 401, 403, 404, 409, 413, 422, 501])('does not retry %i', async (status) => {
    const { client, delays } = makeClient();
    service.reply({ status }, accepted);
    await expect(client.getRiskScore('u1')).rejects.toMatchObject({ status });
    expect(service.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });
});

describe('Retry-After', () => {
  it('waits the seconds it gives', async () => {
    const { client, delays } = makeClient();
    service.reply(
      { status: 429, headers: { 'retry-after': '7' } },
      { status: 503, headers: { 'retry-after': '0' } },
      accepted,
    );
    await client.track(item);
    expect(delays).toEqual([7000, 0]);
  });

  it('waits until the HTTP date it gives', async () => {
    const { client, delays } = makeClient();
    service.reply(
      { status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:12 GMT' } },
      accepted,
    );
    await client.track(item);
    expect(delays).toEqual([12_000]);
  });

  it('falls back to the backoff beyond 60 s', async () => {
    const { client, delays } = makeClient({}, () => 0);
    service.reply({ status: 429, headers: { 'retry-after': '3600' } }, accepted);
    await client.track(item);
    expect(delays).toEqual([375]);
  });
});

describe('abort', () => {
  it('does not retry after an abort during the request', async () => {
    const { client } = makeClient();
    const controller = new AbortController();
    service.reply(() => {
      controller.abort();
      return { hang: true };
    }, accepted);
    await expect(client.track(item, { signal: controller.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(service.requests).toHaveLength(1);
  });

  it('an abort during the backoff delay ends the call at once', async () => {
    // The real sleep and a 30 s Retry-After: only the abort can end this call within the test's time.
    let sleeping!: (ms: number) => void;
    const started = new Promise<number>((resolve) => (sleeping = resolve));
    const sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
      sleeping(ms);
      return abortableSleep(ms, signal);
    };
    const client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url }, { sleep });
    const controller = new AbortController();
    service.reply({ status: 503, headers: { 'retry-after': '30' } }, accepted);
    const call = client.track(item, { signal: controller.signal });
    await expect(started).resolves.toBe(30_000);
    controller.abort(new Error('stop'));
    await expect(call).rejects.toMatchObject({ code: 'ABORTED', cause: new Error('stop') });
    expect(service.requests).toHaveLength(1);
  }, 10_000);
});
