import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { afterAll, expect, it } from 'vitest';
import { CSRF_HEADER, createOpsHandler } from '../src/index.js';
import { AUTH, ORIGIN, authorize, csrfToken } from './client.js';

// The Fetch handler reads a retry's body only after `authorize` and within `bodyTimeoutMs`: an
// unauthorized POST is answered 401 with its body stream never pulled; an authorized one whose
// stream stalls is answered 408 and the stream cancelled.

const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
const ops = createOpsHandler({ queue, authorize, bodyTimeoutMs: 300 });
afterAll(() => queue.close());

/** A body stream that sends `{` then stalls, and records whether it was read or cancelled. */
function stalling(): { body: ReadableStream<Uint8Array>; pulls: number; cancelled: boolean } {
  const state = { pulls: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        state.pulls += 1;
        if (state.pulls === 1) controller.enqueue(new TextEncoder().encode('{'));
        return new Promise(() => undefined); // never more
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return Object.assign(state, { body });
}

const retryRequest = (body: ReadableStream<Uint8Array>, headers: Record<string, string>): Request =>
  new Request(`${ORIGIN}/ops/api/retry`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);

it('answers an unauthorized POST 401 without reading its body', async () => {
  const stream = stalling();
  const response = await ops(retryRequest(stream.body, {}));
  expect(response.status).toBe(401);
  expect(stream.pulls).toBe(0);
});

it('answers 408 REQUEST_TIMEOUT to an authorized retry whose body stalls, and cancels it', async () => {
  const stream = stalling();
  const response = await ops(
    retryRequest(stream.body, { ...AUTH, [CSRF_HEADER]: await csrfToken(ops) }),
  );
  expect(response.status).toBe(408);
  expect(await response.json()).toEqual({
    error: { code: 'REQUEST_TIMEOUT', message: 'The body was not complete within 300 ms.' },
  });
  expect(stream.cancelled).toBe(true);
});

it('answers an unknown method 401 unauthorized and 405 with Allow once authorized', async () => {
  const propfind = (headers: Record<string, string>): Promise<Response> =>
    ops(new Request(`${ORIGIN}/ops`, { method: 'PROPFIND', headers }));
  expect((await propfind({})).status).toBe(401);
  const allowed = await propfind(AUTH);
  expect(allowed.status).toBe(405);
  expect(allowed.headers.get('allow')).toBe('GET');
});

it('refuses a bodyTimeoutMs out of range with a TypeError', () => {
  for (const bodyTimeoutMs of [0, 99, 300_001, 1.5]) {
    expect(() => createOpsHandler({ queue, authorize, bodyTimeoutMs })).toThrow(/bodyTimeoutMs/);
  }
});
