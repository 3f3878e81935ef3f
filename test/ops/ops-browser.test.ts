import type { OpsQueue } from '@churn-risk/ops';
import { createOpsHandler } from '@churn-risk/ops';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import axe from 'axe-core';
import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpsBackend } from '../../packages/ops/test/api-suite.js';
import { AUTH, authorize } from '../../packages/ops/test/client.js';
import { failingReceiver, makeAlert, until } from '../../packages/ops/test/fixture.js';
import { launchChromium } from '../browser/launch-chromium.js';
import { serveForgery, serveOps, type RunningServer } from './ops-page.js';
import { postgresBackend, redisBackend } from './stores.js';

// The operations page in a real Chromium over Redis and over Postgres: an authorized visitor sees
// the failed alerts and retries them with the keyboard; a visitor without authorization sees
// nothing; a forged cross-site form is refused; a script in an alert field stays text; axe-core
// finds no violation, with the list shown and with the retry-all confirmation open.

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

/**
 * axe-core's violations on `page`, as `rule: nodes` lines. axe's source goes in through
 * `page.evaluate` (a DevTools evaluation, which the page's CSP does not govern: a script tag
 * would be refused by `script-src 'nonce-…'`).
 */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const result = await page.evaluate(() =>
    (window as unknown as { axe: typeof axe }).axe.run(document),
  );
  return result.violations.map(
    (v) => `${v.id} (${v.impact ?? 'no impact'}): ${v.nodes.map((n) => n.html).join(' | ')}`,
  );
}

/** What has focus: `BODY`, or the tag with its id or accessible label. */
const focused = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el) return 'none';
    return `${el.tagName} ${el.id || el.getAttribute('aria-label') || (el.textContent ?? '').trim()}`;
  });
const UPDATED = /^Updated \d\d:\d\d:\d\d UTC$/;

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
    // Each Retry button is named by its alert; the meta line has no code words.
    const id = (await queue.failed()).find((f) => f.alert.userId === 'user_plain')?.id ?? '';
    await page
      .getByRole('button', {
        name: `Retry alert for user user_plain (alert id ${id})`,
        exact: true,
      })
      .waitFor();
    expect(await newest.locator('.meta').innerText()).not.toMatch(/Job|\(\)/);
    expect(await page.locator('#retry-all').innerText()).toBe('Retry all 2 failed alerts…');
    // One time format with its zone: the server's, then the script's after a refresh.
    const first = await page.locator('#updated').innerText();
    expect(first).toMatch(UPDATED);
    await expect
      .poll(() => page.locator('#updated').innerText(), { timeout: PATIENCE })
      .not.toBe(first);
    expect(await page.locator('#updated').innerText()).toMatch(UPDATED);
    const violations = await axeViolations(page);
    console.log(
      `axe-core ${axe.version}, the list of 2 failed alerts: ${String(violations.length)} violations`,
    );
    expect(violations).toEqual([]);
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
    // With the keyboard: the button of the older row (the last one), then Enter.
    await page
      .locator('li.alert', { hasText: 'user_plain' })
      .getByRole('button', { name: /^Retry alert for user user_plain / })
      .focus();
    await page.keyboard.press('Enter');
    await page.locator('#status', { hasText: 'Retried 1 alert' }).waitFor({ timeout: PATIENCE });
    // Focus stays in the list: on the Retry button now in its place (the row before, the last).
    await expect
      .poll(() => focused(page), { timeout: PATIENCE })
      .toMatch(/^BUTTON Retry alert for user user_scripted /);
    expect(await page.locator('#status').innerText()).not.toContain('sweep');
    await until(
      async () => (await failedCount(queue)) === 1 && fixture.runs.crm.includes('user_plain'),
    );
    await expect.poll(() => shownFailed(page), { timeout: PATIENCE }).toBe('1');
    await expect.poll(() => page.locator('li.alert').count(), { timeout: PATIENCE }).toBe(1);
    expect(fixture.runs.crm.filter((u) => u === 'user_plain')).toHaveLength(2);
    expect(fixture.runs.audit).toHaveLength(audits);
    expect(await page.locator('#retry-all').innerText()).toBe('Retry all 1 failed alert…');
    expect(await focused(page)).toMatch(/^BUTTON Retry alert for user user_scripted /);
  });

  it('shows a new failure on its own, and retries all after a confirmation', async () => {
    const { fixture, queue } = backend;
    fixture.broken = true;
    await fixture.deliver(makeAlert({ userId: 'user_late' }));
    await expect.poll(() => shownFailed(page), { timeout: PATIENCE }).toBe('2');
    await page.locator('li.alert', { hasText: 'user_late' }).waitFor({ timeout: PATIENCE });
    fixture.broken = false;
    const dialog = page.locator('#confirm-all');
    // Enter opens the confirmation on Cancel, so a second Enter cancels.
    await page.locator('#retry-all').focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'visible' });
    expect(await focused(page)).toBe('BUTTON confirm-no');
    expect(await page.getByRole('dialog', { name: 'Retry all 2 failed alerts?' }).count()).toBe(1);
    const violations = await axeViolations(page);
    console.log(
      `axe-core ${axe.version}, the confirmation open: ${String(violations.length)} violations`,
    );
    expect(violations).toEqual([]);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused(page)).toBe('BUTTON retry-all');
    // Escape cancels too, and focus goes back to "Retry all".
    await page.keyboard.press('Space');
    await dialog.waitFor({ state: 'visible' });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused(page)).toBe('BUTTON retry-all');
    expect(await failedCount(queue)).toBe(2);
    // Tab to "Yes, retry all", Enter.
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'visible' });
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('BUTTON confirm-yes');
    await page.keyboard.press('Enter');
    await page.locator('#status', { hasText: 'Retried 2 alerts.' }).waitFor({ timeout: PATIENCE });
    await until(async () => (await failedCount(queue)) === 0);
    await page.locator('.empty', { hasText: 'No failed alerts' }).waitFor({ timeout: PATIENCE });
    // Nothing left to retry: focus is on the list's heading, never on <body>.
    await expect.poll(() => focused(page), { timeout: PATIENCE }).toBe('H2 No failed alerts');
    await expect.poll(() => shownFailed(page), { timeout: PATIENCE }).toBe('0');
    await expect.poll(() => page.title(), { timeout: PATIENCE }).toMatch(/^\(0\) Failed alerts/);
    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});

describe('the operations page in invocation mode (no worker), in Chromium', () => {
  it('says that a retried alert runs at the next sweep, and it does', async () => {
    const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
    const fixture = failingReceiver(queue, 'invocation');
    const server = await serveOps(createOpsHandler({ queue, authorize, refreshMs: 500 }));
    const context = await (browser as Browser).newContext({ extraHTTPHeaders: AUTH });
    try {
      // A sweep (a cron's, or a delivery's under waitUntil) runs the alert, which fails.
      await fixture.deliver(makeAlert({ userId: 'user_swept' }));
      await fixture.receiver.sweep({ budgetMs: 2_000 });
      expect(await failedCount(queue)).toBe(1);
      const page = await context.newPage();
      await page.goto(`${server.origin}/ops`);
      expect(await page.locator('.note').innerText()).toContain('No worker runs this queue');
      fixture.broken = false;
      await page.getByRole('button', { name: /^Retry alert for user user_swept / }).click();
      await page
        .locator('#status', { hasText: 'retried alerts run when the next sweep runs' })
        .waitFor({ timeout: PATIENCE });
      expect(fixture.runs.crm).toEqual(['user_swept']); // nothing ran it yet
      const swept = await fixture.receiver.sweep({ budgetMs: 2_000 });
      expect(swept.completed).toBe(1);
      expect(fixture.runs.crm).toEqual(['user_swept', 'user_swept']);
    } finally {
      await context.close();
      await server.close();
      await fixture.receiver.close({ timeoutMs: 5_000 });
    }
  });

  it('says nothing of a sweep when a worker runs the queue', async () => {
    const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
    const fixture = failingReceiver(queue);
    const server = await serveOps(createOpsHandler({ queue, authorize }));
    const context = await (browser as Browser).newContext({ extraHTTPHeaders: AUTH });
    try {
      await fixture.deliver(makeAlert());
      await until(async () => (await failedCount(queue)) === 1);
      const page = await context.newPage();
      await page.goto(`${server.origin}/ops`);
      await page.locator('li.alert').waitFor();
      expect(await page.locator('.note').count()).toBe(0);
    } finally {
      await context.close();
      await server.close();
      await fixture.receiver.close({ timeoutMs: 5_000 });
    }
  });
});
