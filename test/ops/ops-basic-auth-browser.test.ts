import { createDurableQueue, createMemoryStore, type DurableQueue } from '@churn-risk/core/store';
import { basicAuth, createOpsHandler } from '@churn-risk/ops';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../browser/launch-chromium.js';

// The page behind `basicAuth` in a real Chromium, on a server that hands every path to
// `ops.node`: the browser is challenged, signs in and gets the page; and a page opened at a path
// that begins with `//attacker` (or `/\attacker`, or `/%2F%2Fattacker`) still fetches its API
// from its own origin. The CSP is bypassed here, so that only the page's own URLs keep the
// requests home (`connect-src 'self'` would otherwise hide a fault).

const USER = 'on-call';
const PASSWORD = 'correct horse é battery';

let browser: Browser | undefined;
let queue: DurableQueue;
let ops: Server;
let attacker: Server;
const seen: { url: string; authorized: boolean; status: number }[] = [];
const stolen: string[] = [];

const portOf = (server: Server): number => (server.address() as AddressInfo).port;
const listen = (server: Server): Promise<void> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const stop = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => {
      resolve();
    });
  });

beforeAll(async () => {
  browser = await launchChromium();
  queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
  const handler = createOpsHandler({
    queue,
    authorize: basicAuth({ username: USER, password: PASSWORD, realm: 'churn-risk ops' }),
    refreshMs: 500,
  });
  ops = createServer((req: IncomingMessage, res) => {
    res.on('finish', () => {
      seen.push({
        url: req.url ?? '',
        authorized: req.headers.authorization !== undefined,
        status: res.statusCode,
      });
    });
    void handler.node(req, res);
  });
  attacker = createServer((req, res) => {
    stolen.push(req.url ?? '');
    res.setHeader('access-control-allow-origin', '*');
    res.end('{}');
  });
  await Promise.all([listen(ops), listen(attacker)]);
});

afterAll(async () => {
  await Promise.all([browser?.close(), stop(ops), stop(attacker), queue.close()]);
});

const newContext = (password = PASSWORD): Promise<BrowserContext> =>
  (browser as Browser).newContext({
    httpCredentials: { username: USER, password },
    bypassCSP: true,
  });

describe('basicAuth in Chromium', () => {
  it('challenges the browser, which signs in and gets the page and its API', async () => {
    const context = await newContext();
    try {
      const page = await context.newPage();
      seen.length = 0;
      const response = await page.goto(`http://127.0.0.1:${String(portOf(ops))}/ops`);
      expect(response?.status()).toBe(200);
      await expect.poll(() => page.locator('h1').innerText()).toBe('Failed alerts');
      // The first request went without credentials and was challenged; then every one carried them.
      expect(seen[0]).toEqual({ url: '/ops', authorized: false, status: 401 });
      await expect
        .poll(() => seen.some((r) => r.url === '/ops/api/counts' && r.status === 200))
        .toBe(true);
      expect(seen.slice(1).every((r) => r.authorized && r.status === 200)).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('keeps refusing a wrong password', async () => {
    const context = await newContext('wrong');
    try {
      const response = await (
        await context.newPage()
      ).goto(`http://127.0.0.1:${String(portOf(ops))}/ops`);
      expect(response?.status()).toBe(401);
      expect(response?.headers()['www-authenticate']).toBe(
        'Basic realm="churn-risk ops", charset="UTF-8"',
      );
    } finally {
      await context.close();
    }
  });
});

describe('the API base of a page opened at a path that names another host', () => {
  const target = (): string => `127.0.0.1:${String(portOf(attacker))}`;
  // The path opened, and the path the counts must be fetched from (the port is known later).
  const cases: [string, string][] = [
    ['//host/ops', '/host/ops/api/counts'],
    ['/\\host/ops', '/host/ops/api/counts'],
    ['///host/ops/', '/host/ops/api/counts'],
    ['/%2F%2Fhost/ops', '/%2F%2Fhost/ops/api/counts'],
  ];

  it.each(cases)('%s fetches its counts from its own origin', async (opened, fetched) => {
    const [path, expected] = [opened, fetched].map((p) => p.replace('host', target()));
    const context = await newContext();
    try {
      const page = await context.newPage();
      seen.length = 0;
      stolen.length = 0;
      await page.goto(`http://127.0.0.1:${String(portOf(ops))}${String(path)}`);
      await expect.poll(() => page.locator('h1').innerText()).toBe('Failed alerts');
      // Two refreshes of the counts (every 500 ms), both to the ops server's own path.
      await expect
        .poll(() => seen.filter((r) => r.url === expected && r.status === 200).length, {
          timeout: 10_000,
        })
        .toBeGreaterThanOrEqual(2);
      expect(stolen).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
