import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChurnRiskClient } from '@churn-risk/core';
import { createManualClock, createSandbox, type Sandbox } from '@churn-risk/sandbox';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStatusReceiver, type StatusReceiver } from '../support/status-receiver.js';
import { waitForDeliveries } from './dashboard-page.js';
import { launchChromium } from './launch-chromium.js';

// The sandbox's dashboard in a real Chromium: a sandbox on a manual clock, a webhook stub, and
// one page at 1280x800 that stays open while the API changes things under it.

/** The page shows a change made through the API within a second. */
const WITHIN_A_SECOND = 1_000;
/** How long the other waits may take (no stated bound; generous for a loaded machine). */
const PATIENCE = 5_000;
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

let sandbox: Sandbox | undefined;
let receiver: StatusReceiver | undefined;
let browser: Browser | undefined;
let page: Page;
let client: ChurnRiskClient;
const pageErrors: string[] = [];
const loaded = new Map<string, number>();

beforeAll(async () => {
  receiver = await startStatusReceiver();
  sandbox = await createSandbox({ clock: createManualClock(Date.now()) });
  client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxRetries: 0 });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('response', (response) => {
    if (new URL(response.url()).pathname.startsWith('/dashboard'))
      void response.body().then((body) => loaded.set(response.url(), body.length));
  });
  await page.goto(sandbox.dashboardUrl);
  await page.locator('#live', { hasText: 'Live' }).waitFor({ timeout: 10_000 });
});

afterAll(async () => {
  // Each closes even when another fails.
  const results = await Promise.allSettled([browser?.close(), sandbox?.close(), receiver?.close()]);
  for (const result of results) if (result.status === 'rejected') throw result.reason;
});

/** A count of one with a plural noun ("1 users"), anywhere on the page. */
const WRONG_PLURAL = /\b1 (users|watches|deliveries|tries|alerts|events|signals|days|hours)\b/;

/** The text a reader sees on `shown` (hidden sections excluded). */
function visibleText(shown: Page): Promise<string> {
  return shown.evaluate(() => document.body.innerText);
}

/** Watches `userId` (threshold 0.7) and drives it over; resolves with its newest delivery's id. */
async function crossWatch(userId: string): Promise<string> {
  await client.identify(userId, { plan: 'pro', mrr: 99 });
  await client.watch(userId, { threshold: 0.7, webhook: receiver!.url, cooldown: '1h' });
  await client.trackBulk([
    { userId, event: 'payment_failed' },
    { userId, event: 'payment_failed' },
  ]);
  await sandbox!.deliveries.idle();
  const record = sandbox!.deliveries.list({ userId }).at(-1);
  if (!record) throw new Error(`no delivery for ${userId}`);
  return record.id;
}

describe('the sandbox dashboard in Chromium', () => {
  it('loads with the key from the URL fragment: live, no errors, the whole page under 100 KB', async () => {
    expect(sandbox!.dashboardUrl).toMatch(/\/dashboard#key=sk_test_/);
    expect(await page.locator('#app').isVisible()).toBe(true);
    expect(await page.locator('#key-missing').isVisible()).toBe(false);
    expect(await page.title()).toBe('churn-risk sandbox');
    expect(await page.locator('#counts').textContent()).toBe('0 users, 0 watches, 0 deliveries');
    const bytes = [...loaded.values()].reduce((sum, size) => sum + size, 0);
    expect(loaded.size).toBeGreaterThanOrEqual(3); // the page, its styles and its script(s)
    expect(bytes).toBeLessThan(100 * 1024);
    expect(pageErrors).toEqual([]);
  });

  it('shows a clear "key missing" state without the fragment, and "key rejected" for a wrong key', async () => {
    const context = page.context();
    const [missing, wrong] = await Promise.all([context.newPage(), context.newPage()]);
    try {
      // No connection badge at any time without a working key: it is hidden from the start.
      await missing.goto(`${sandbox!.url}/dashboard`);
      expect(await missing.locator('#live').isVisible()).toBe(false);
      await missing.locator('#key-missing').waitFor({ state: 'visible', timeout: PATIENCE });
      expect(await missing.locator('#key-missing h2').textContent()).toBe('API key missing');
      expect(await missing.locator('#app').isVisible()).toBe(false);
      await wrong.goto(`${sandbox!.url}/dashboard#key=sk_test_wrong`);
      expect(await wrong.locator('#live').isVisible()).toBe(false);
      await wrong.locator('#key-rejected').waitFor({ state: 'visible', timeout: PATIENCE });
      expect(await wrong.locator('#app').isVisible()).toBe(false);
      for (const shown of [missing, wrong]) {
        expect(await shown.locator('#live').isVisible()).toBe(false);
        expect(await visibleText(shown)).not.toMatch(/\b(Live|Connecting)\b/);
      }
    } finally {
      await Promise.all([missing.close(), wrong.close()]);
    }
  });

  it('shows a user tracked through the API, with its score, within a second', async () => {
    await client.track({ userId: 'tracked_1', event: 'payment_failed' });
    const row = page.locator('tr[data-user="tracked_1"]');
    await row.waitFor({ timeout: WITHIN_A_SECOND });
    expect(await row.locator('.score').textContent()).toBe('0.55');
    expect(await row.locator('.tier').textContent()).toBe('medium');
    expect(await row.locator('.signals').textContent()).toContain('payment_failed');
    expect(await row.locator('svg.spark title').textContent()).toMatch(/0\.55/);
    await page
      .locator('#counts', { hasText: /^1 user, 0 watches, 0 deliveries$/ })
      .waitFor({ timeout: WITHIN_A_SECOND });
  });

  it('shows a watch crossing as a delivery with its try and status', async () => {
    receiver!.failing.add('crossing_1');
    const id = await crossWatch('crossing_1');
    // The page may have polled while the first try was still in flight: wait for the try.
    const [shown] = await waitForDeliveries(
      page,
      'crossing_1',
      (l) => l.length === 1 && l[0]!.tries.length === 1,
      PATIENCE,
    );
    expect(shown).toEqual({ id, state: 'pending', replayOf: null, tries: ['HTTP 500'] });
    const article = page.locator(`article[data-delivery="${id}"]`);
    expect(await article.locator('.next').textContent()).toMatch(/next try: .*\(in 1 min\)/);
    expect(await page.locator('#watches-table').textContent()).toContain('crossing_1');
    await page
      .locator('#counts', { hasText: /^2 users, 1 watch, 1 delivery$/ })
      .waitFor({ timeout: PATIENCE });
    expect(await visibleText(page)).not.toMatch(WRONG_PLURAL);
  });

  it('replays a delivery from the keyboard: a new try appears', async () => {
    const id = await crossWatch('replayed_1');
    await waitForDeliveries(page, 'replayed_1', (l) => l.length === 1, PATIENCE);
    await page.locator(`article[data-delivery="${id}"] button[data-action="replay"]`).focus();
    await page.keyboard.press('Enter');
    const list = await waitForDeliveries(
      page,
      'replayed_1',
      (l) => l.length === 2 && l[0]!.tries.length === 1,
      PATIENCE,
    );
    expect(list.map((shown) => [shown.replayOf, shown.tries])).toEqual([
      [id, ['HTTP 202']],
      [null, ['HTTP 202']],
    ]);
    expect(receiver!.received.filter((user) => user === 'replayed_1')).toHaveLength(2);
    expect(await page.locator('#message').textContent()).toMatch(/^Replay started: dlv_/);
    // The replay's note does not push its buttons onto a second line: its header is one line,
    // as high as the original's, with both buttons on it.
    const replay = page.locator(`article[data-delivery="${list[0]!.id}"]`);
    const original = page.locator(`article[data-delivery="${id}"]`);
    expect(await replay.locator('.replay-of').textContent()).toBe(` · replay of ${id}`);
    const [idBox, copyBox, replayBox, header, originalHeader] = await Promise.all([
      replay.locator('.delivery-id').boundingBox(),
      replay.locator('button[data-action="copy"]').boundingBox(),
      replay.locator('button[data-action="replay"]').boundingBox(),
      replay.locator('header').boundingBox(),
      original.locator('header').boundingBox(),
    ]);
    expect(Math.abs(copyBox!.y - replayBox!.y)).toBeLessThan(1);
    expect(replayBox!.height).toBeCloseTo(copyBox!.height, 0);
    expect(replayBox!.y).toBeLessThan(idBox!.y + idBox!.height); // on the id's line
    expect(header!.height).toBeCloseTo(originalHeader!.height, 0);
    expect(header!.height).toBeLessThan(2 * replayBox!.height);
  });

  it('keeps the keyboard focus on a button across live updates', async () => {
    const id = await crossWatch('focus_1');
    const button = page.locator(`article[data-delivery="${id}"] button[data-action="replay"]`);
    await button.waitFor({ timeout: PATIENCE });
    await button.focus();
    await client.track({ userId: 'focus_other', event: 'login' });
    await page.locator('tr[data-user="focus_other"]').waitFor({ timeout: PATIENCE });
    expect(
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset['key']),
    ).toBe(`replay:${id}`);
  });

  it('advancing the manual clock fires a due retry', async () => {
    receiver!.failing.add('retried_1');
    const id = await crossWatch('retried_1');
    await waitForDeliveries(page, 'retried_1', (l) => l[0]?.tries.length === 1, PATIENCE);
    receiver!.failing.delete('retried_1');
    await page.locator('#clock button[data-ms="60000"]').click();
    const [shown] = await waitForDeliveries(
      page,
      'retried_1',
      (l) => l[0]?.tries.length === 2,
      PATIENCE,
    );
    expect(shown).toEqual({
      id,
      state: 'delivered',
      replayOf: null,
      tries: ['HTTP 500', 'HTTP 202'],
    });
    expect(await page.locator('#message').textContent()).toMatch(/^Clock advanced to /);
  });

  it('shows a user id, traits and event names full of markup as text, and runs none of it', async () => {
    const evil = '<img src=x onerror=window.__x=1>';
    await client.identify(evil, { plan: '<b id="bold">pro</b>' });
    await client.track({ userId: evil, event: '<svg onload=window.__x=2>' });
    await client.watch(evil, { threshold: 0.3, webhook: receiver!.url, cooldown: '1h' });
    await client.track({ userId: evil, event: 'payment_failed' });
    const shown = await waitForDeliveries(
      page,
      evil,
      (l) => l.length === 1 && l[0]!.tries.length === 1,
      PATIENCE,
    );
    expect(shown[0]!.tries).toEqual(['HTTP 202']);
    const seen = await page.evaluate((id) => {
      const row = [...document.querySelectorAll<HTMLElement>('#users-table tr')].find(
        (tr) => tr.dataset['user'] === id,
      );
      return {
        userId: row?.querySelector('.user-id')?.textContent,
        traits: row?.querySelector('.traits')?.textContent,
        events: row?.querySelector('.events')?.textContent,
        injected: document.querySelectorAll('img, #bold, main svg:not(.spark)').length,
        x: (window as { __x?: unknown }).__x,
      };
    }, evil);
    expect(seen).toEqual({
      userId: evil,
      traits: 'plan=<b id="bold">pro</b>',
      events: '<svg onload=window.__x=2>, payment_failed',
      injected: 0,
      x: undefined,
    });
  });

  it('writes a screenshot of the dashboard with data to test/artifacts/', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const path = `${ARTIFACTS}dashboard.png`;
    expect(await visibleText(page)).not.toMatch(WRONG_PLURAL);
    await page.screenshot({ path });
    const png = readFileSync(path);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(pageErrors).toEqual([]);
  });
});
