import { expect, it } from 'vitest';
import { createOpsHandler, type OpsQueue } from '../src/index.js';
import { authorize, bodyOf, get, postRetry } from './client.js';

// A store that is down: the page still answers, says so in the store's own words, and shows the
// cause to nobody (it goes to the logger); the API answers 503 STORE_UNAVAILABLE.

const SECRET_CAUSE = 'connect ECONNREFUSED redis://:hunter2@10.0.0.7:6379';
const down: OpsQueue = {
  kind: 'redis',
  failed: () => Promise.reject(new Error(SECRET_CAUSE)),
  retry: () => Promise.reject(new Error(SECRET_CAUSE)),
  retryAll: () => Promise.reject(new Error(SECRET_CAUSE)),
  counts: () => Promise.reject(new Error(SECRET_CAUSE)),
  health: () =>
    Promise.resolve({ reachable: false, error: 'Redis did not answer PING within 2000 ms.' }),
};

it('shows an unreachable store on the page and answers 503 in the API, without the cause', async () => {
  const logged: unknown[] = [];
  const ops = createOpsHandler({
    queue: down,
    authorize,
    logger: { error: (fields) => logged.push(fields) },
  });
  const page = await get(ops, '/');
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('Store unreachable: Redis did not answer PING within 2000 ms.');
  expect(html).toContain('The store did not answer when asked for the failed alerts');
  expect(html).not.toContain('hunter2');
  for (const response of [await get(ops, '/api/failed'), await postRetry(ops, { all: true })]) {
    expect(response.status).toBe(503);
    const body = await bodyOf<{ error: { code: string; message: string } }>(response);
    expect(body.error.code).toBe('STORE_UNAVAILABLE');
    expect(JSON.stringify(body)).not.toContain('hunter2');
  }
  expect(logged.length).toBeGreaterThanOrEqual(3);
});

it('shows the failed count alone, and health from it, for a store with count() only (D1)', async () => {
  const d1: OpsQueue = {
    failed: () => Promise.resolve([]),
    retry: () => Promise.resolve(),
    retryAll: () => Promise.resolve(0),
    count: () => Promise.resolve(0),
  };
  const status = await bodyOf(await get(createOpsHandler({ queue: d1, authorize }), '/api/counts'));
  expect(status).toEqual({ counts: { failed: 0 }, health: { reachable: true } });
});
