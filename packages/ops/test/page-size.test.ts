import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { gzipSync } from 'node:zlib';
import { afterAll, expect, it } from 'vitest';
import { createOpsHandler } from '../src/index.js';
import { authorize, get } from './client.js';
import { failingReceiver, makeAlert, until } from './fixture.js';

// The page is one answer, its style and script inline (nothing else to load): under 30 KB gzip
// with a full default page of failed alerts. The sizes are printed for bench/README.md.

const LIMIT = 30 * 1024;
const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
const fixture = failingReceiver(queue);
afterAll(() => fixture.receiver.close({ timeoutMs: 5_000 }));

async function pageBytes(): Promise<{ raw: number; gzip: number }> {
  const response = await get(createOpsHandler({ queue, authorize }), '/');
  const body = Buffer.from(await response.arrayBuffer());
  return { raw: body.length, gzip: gzipSync(body, { level: 6 }).length };
}

it('is under 30 KB gzip, empty and with a page of 20 failed alerts', async () => {
  const empty = await pageBytes();
  for (let i = 0; i < 25; i++) await fixture.deliver(makeAlert());
  await until(async () => (await queue.failed()).length === 25);
  const full = await pageBytes();
  console.log(
    `ops page: empty ${String(empty.raw)} B (${String(empty.gzip)} B gzip); ` +
      `20 failed alerts ${String(full.raw)} B (${String(full.gzip)} B gzip)`,
  );
  expect(full.raw).toBeGreaterThan(empty.raw);
  expect(empty.gzip).toBeLessThan(LIMIT);
  expect(full.gzip).toBeLessThan(LIMIT);
});
