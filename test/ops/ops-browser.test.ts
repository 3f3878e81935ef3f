import type { OpsQueue } from '@churn-risk/ops';
import { createOpsHandler } from '@churn-risk/ops';
import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpsBackend } from '../../packages/ops/test/api-suite.js';
import { AUTH, authorize } from '../../packages/ops/test/client.js';
import { makeAlert, until } from '../../packages/ops/test/fixture.js';
import { launchChromium } from '../browser/launch-chromium.js';
import { serveForgery, serveOps, type RunningServer } from './ops-page.js';
import { postgresBackend, redisBackend } from './stores.js';

// The operations page in a real Chromium over Redis and over Postgres: an authorized visitor sees
// the failed alerts and retries them; a visitor without authorization sees nothing; a forged
// cross-site form is refused; a script in an alert field stays text.

const PATIENCE = 10_000;
let redis: RedisServer | undefined;
let postgres: PostgresServer | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  [redis, postgres, browser] = await Promise.all([
    startRedisServer(),
    startPostgres(),
    launchChromium(),
  ]);
});

afterAll(async () => {
  const results = await Promise.allSettled([browser?.close(), redis?.stop(), postgres?.stop()]);
  redis?.cleanup();
  postgres?.cleanup();
  for (const result of results) if (result.status === 'rejected') throw result.reason;
});

const failedCount = async (queue: OpsQueue): Promise<number> => (await queue.failed()).length;
const shownFailed = (page: Page): Promise<string> =>
  page.locator('[data-count="failed"]').innerText();
const SCRIPTED = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';

const backends: [string, () => OpsBackend][] = [
  ['Redis', () => redisBackend(redis?.url ?? '')],
  ['Postgres', () => postgresBackend(postgres?.url ?? '')],
];

describe.each(backends)('the operations page over %s, in Chromium', (_name, create) => {
  let backend: OpsBackend;
  let server: RunningServer;
  let page: Page;
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    backend = create();
    server = await serveOps(createOpsHandler({ queue: backend.queue, authorize, refreshMs: 500 }));
    const context = await (browser as Browser).newContext({ extraHTTPHeaders: AUTH });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
    });
  });

  afterAll(async () => {
    await page.context().close();
    await server.close();
    await backend.close();
  });

  it('shows failed alerts with their error, tries and succeeded handlers; an alert field stays text', async () => {
    const { fixture, queue } = backend;
    await fixture.deliver(makeAlert({ userId: 'user_plain' }));
    await until(async () => (await failedCount(queue)) === 1);
    await fixture.deliver(makeAlert({ userId: 'user_scripted', recommendation: SCRIPTED }));
    await until(async () => (await failedCount(queue)) === 2);
    await page.goto(`${server.origin}/ops`);
    await expect.poll(() => page.locator('li.alert').count()).toBe(2);
    const newest = page.locator('li.alert').first();
    expect(await newest.innerText()).toContain('user_scripted');
    expect(await newest.locator('.error').innerText()).toContain('crm is down for user_scripted');
    expect(await newest.locator('.meta').innerText()).toMatch(
      /Tries: 1.*Handlers that succeeded: audit/s,
    );
    expect(await shownFailed(page)).toBe('2');
    expect(await page.locator('#health').innerText()).toBe('Store reachable');
    await newest.locator('summary').click();
    // As text in the alert's JSON (where JSON.stringify put a backslash before each quote).
    expect(await newest.locator('details pre').innerText()).toContain(JSON.stringify(SCRIPTED));
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('li.alert img').count()).toBe(0);
  });

  it('shows nothing to a visitor without authorization', async () => {
    const stranger = await (browser as Browser).newPage();
    try {
      const answer = await stranger.goto(`${server.origin}/ops`);
      expect(answer?.status()).toBe(401);
      const text = await stranger.locator('body').innerText();
      expect(text).not.toContain('user_');
      const api = await stranger.request.get(`${server.origin}/ops/api/failed`);
      expect(api.status()).toBe(401);
    } finally {
      await stranger.close();
    }
  });

  it('refuses a forged cross-site form POST, with the credentials the browser adds, and retries nothing', async () => {
    const forgery = await serveForgery(`${server.origin}/ops/api/retry`);
    const victim = await page.context().newPage();
    try {
      const refused = victim.waitForResponse((r) => r.url().endsWith('/ops/api/retry'));
      await victim.goto(forgery.origin);
      expect((await refused).status()).toBe(403);
      expect(await failedCount(backend.queue)).toBe(2);
    } finally {
      await victim.close();
      await forgery.close();
    }
  });

  it('retries one alert from the page: only its failed handler runs, and the counts move', async () => {
    const { fixture, queue } = backend;
    fixture.broken = false;
    const audits = fixture.runs.audit.length;
    await page
      .locator('li.alert', { hasText: 'user_plain' })
      .getByRole('button', { name: 'Retry' })
      .click();
    await page.locator('#status', { hasText: 'Retried' }).waitFor({ timeout: PATIENCE });
    await until(
      async () => (await failedCount(queue)) === 1 && fixture.runs.crm.includes('user_plain'),
    );
    await expect.poll(() => shownFailed(page), { timeout: PATIENCE }).toBe('1');
    await expect.poll(() => page.locator('li.alert').count(), { timeout: PATIENCE }).toBe(1);
    expect(fixture.runs.crm.filter((u) => u === 'user_plain')).toHaveLength(2);
    expect(fixture.runs.audit).toHaveLength(audits);
  });

  it('shows a new failure on its own, and retries all after a confirmation', async () => {
    const { fixture, queue } = backend;
    fixture.broken = true;
    await fixture.deliver(makeAlert({ userId: 'user_late' }));
    await expect.poll(() => shownFailed(page), { timeout: PATIENCE }).toBe('2');
    await page.locator('li.alert', { hasText: 'user_late' }).waitFor({ timeout: PATIENCE });
    fixture.broken = false;
    await page.locator('#retry-all').click();
    await page.locator('#confirm-all').waitFor({ state: 'visible' });
    expect(await page.locator('#confirm-all').innerText()).toContain('Retry all 2 failed alerts?');
    await page.locator('#confirm-no').click();
    await page.locator('#confirm-all').waitFor({ state: 'hidden' });
    expect(await failedCount(queue)).toBe(2);
    await page.locator('#retry-all').click();
    await page.locator('#confirm-yes').click();
    await page.locator('#status', { hasText: 'Retried 2 alerts.' }).waitFor({ timeout: PATIENCE });
    await until(async () => (await failedCount(queue)) === 0);
    await page.locator('.empty', { hasText: 'No failed alerts' }).waitFor({ timeout: PATIENCE });
    await expect.poll(() => shownFailed(page), { timeout: PATIENCE }).toBe('0');
    await expect.poll(() => page.title(), { timeout: PATIENCE }).toMatch(/^\(0\) Failed alerts/);
    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
