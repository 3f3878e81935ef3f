import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { CSRF_HEADER, createOpsHandler } from '../src/index.js';
import { AUTH, authorize } from './client.js';
import { rawRequest } from '../../../test/support/slow-requests.js';
import { failingReceiver, makeAlert, until, type FailingReceiver } from './fixture.js';

// `ops.node` on Node's own http server: the same answers as the Fetch handler, the body read
// within its limit.

let server: Server | undefined;
let open: FailingReceiver | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  await open?.receiver.close({ timeoutMs: 5_000 });
});

it('serves the page, the API and a retry through ops.node', async () => {
  const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
  open = failingReceiver(queue);
  const alert = makeAlert();
  await open.deliver(alert);
  await until(async () => (await queue.failed()).length === 1);
  const ops = createOpsHandler({ queue, authorize });
  server = createServer((req, res) => void ops.node(req, res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/admin/ops`;

  const page = await fetch(base, { headers: AUTH });
  expect(page.status).toBe(200);
  expect(await page.text()).toContain(alert.userId);
  expect((await fetch(`${base}/api/failed`)).status).toBe(401);
  const token = page.headers.get(CSRF_HEADER) ?? '';
  const post = (body: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base}/api/retry`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', [CSRF_HEADER]: token, ...headers },
      body,
    });
  expect((await post(JSON.stringify({ id: 'x'.repeat(10) + ' '.repeat(5_000) }))).status).toBe(413);
  expect((await post('{}', { origin: 'http://evil.test' })).status).toBe(403);
  const [failed] = await queue.failed();
  open.broken = false;
  const retried = await post(JSON.stringify({ id: failed?.id }), { origin: new URL(base).origin });
  expect(await retried.json()).toEqual({ retried: 1 });
  await until(async () => (await queue.failed()).length === 0 && open?.runs.crm.length === 2);
  expect(open.runs.audit).toHaveLength(1);
});

it('keeps the Host header as the origin of a path that begins with // or names a host', async () => {
  const seen: string[] = [];
  const ops = createOpsHandler({
    queue: createDurableQueue(createMemoryStore()),
    authorize: (request) => {
      seen.push(request.url);
      return authorize(request);
    },
  });
  server = createServer((req, res) => void ops.node(req, res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const own = `http://127.0.0.1:${String(port)}`;
  for (const path of ['//evil.test:81/ops', '///evil.test/ops', 'http://evil.test/ops?x=1']) {
    const answer = await rawRequest({
      port,
      method: 'GET',
      path,
      headers: AUTH,
      closeWithinMs: 100,
    });
    expect(answer.status, path).toBe(200);
  }
  const bad = await rawRequest({
    port,
    method: 'GET',
    path: '/ops',
    headers: { ...AUTH, host: 'evil.test/x' },
    closeWithinMs: 100,
  });
  expect(bad.status).toBe(200);
  expect(seen).toEqual([
    `${own}//evil.test:81/ops`,
    `${own}///evil.test/ops`,
    `${own}/ops?x=1`,
    'http://localhost/ops',
  ]);
});
