import { ChurnRiskClient } from '@churn-risk/core';
import { createManualClock, createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { SandboxClient } from '@churn-risk/sandbox/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceFailure } from './helpers/service-failure.js';
import { startReceiver, type TestReceiver } from './helpers/webhook-receiver.js';

// The developer routes through the typed SandboxClient: replay, filters, test alerts, the
// clock, the dashboard's state and its public files.

let sandbox: Sandbox;
let receiver: TestReceiver;
let api: ChurnRiskClient;
let client: SandboxClient;

beforeAll(async () => {
  sandbox = await createSandbox({ clock: createManualClock() });
  receiver = await startReceiver(() => 202);
  api = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxRetries: 0 });
  client = new SandboxClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
});
afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});

async function cross(userId: string, webhook = receiver.url): Promise<string> {
  await api.watch(userId, { threshold: 0.7, webhook, cooldown: '1h' });
  await api.trackBulk(
    ['payment_failed', 'payment_failed', 'plan_downgraded'].map((event) => ({ userId, event })),
  );
  await sandbox.deliveries.idle();
  return sandbox.deliveries.list({ userId }).at(-1)!.id;
}

describe('POST /v1/deliveries/{id}/replay', () => {
  it('starts a new delivery of the byte-identical payload, signed afresh, to the same webhook', async () => {
    const id = await cross('replay_me');
    const before = receiver.received.length;
    const replayed = await client.replay(id);
    expect(replayed).toMatchObject({ replayOf: id, webhook: receiver.url, state: 'pending' });
    expect(replayed.id).not.toBe(id);
    await sandbox.deliveries.idle();
    const [original, copy] = receiver.received.slice(before - 1);
    expect(copy!.body).toBe(original!.body);
    expect(sandbox.deliveries.get(replayed.id)).toMatchObject({
      state: 'delivered',
      attempts: [{ status: 202 }],
    });
    expect(sandbox.deliveries.get(id)!.attempts).toHaveLength(1);
  });

  it('answers 404 NOT_FOUND for an unknown delivery', async () => {
    const error = await serviceFailure(client.replay('dlv_nope'));
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});

describe('GET /v1/deliveries filters', () => {
  it('filters by status and by userId, together or alone', async () => {
    const down = 'http://127.0.0.1:9/down';
    await cross('filter_ok');
    await cross('filter_down', down);
    const all = await client.listDeliveries();
    expect(all.length).toBeGreaterThanOrEqual(2);
    const pending = await client.listDeliveries({ status: 'pending' });
    expect(pending.map((d) => d.alert.userId)).toContain('filter_down');
    expect(pending.every((d) => d.state === 'pending')).toBe(true);
    const delivered = await client.listDeliveries({ status: 'delivered', userId: 'filter_ok' });
    expect(delivered.map((d) => [d.alert.userId, d.state])).toEqual([['filter_ok', 'delivered']]);
    expect(await client.listDeliveries({ status: 'failed', userId: 'filter_ok' })).toEqual([]);
  });

  it('refuses an unknown status or a repeated filter with 400 naming the field', async () => {
    const headers = { authorization: `Bearer ${sandbox.apiKey}` };
    for (const query of ['status=done', 'userId=a&userId=b', 'userId=']) {
      const response = await fetch(`${sandbox.url}/v1/deliveries?${query}`, { headers });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { details: { path: string }[] } };
      expect(body.error.details[0]!.path).toBe(query.split('=')[0]);
    }
  });
});

describe('POST /v1/sandbox/test-alert', () => {
  it("sends the user's current risk to its watch webhook, and 404 without a watch", async () => {
    await cross('tested');
    const record = await client.sendTestAlert('tested');
    expect(record.alert).toMatchObject({ userId: 'tested', score: 0.9, tier: 'high' });
    await sandbox.deliveries.idle();
    expect(sandbox.deliveries.get(record.id)!.state).toBe('delivered');
    const error = await serviceFailure(client.sendTestAlert('unwatched'));
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});

describe('the dashboard', () => {
  it('serves its page, styles and script without a key, with a strict CSP; everything else needs the key', async () => {
    const page = await fetch(`${sandbox.url}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(page.headers.get('set-cookie')).toBeNull();
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//); // nothing from a CDN
    const script = await fetch(`${sandbox.url}/dashboard/js/main.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toMatch(/location\.hash/);
    expect((await fetch(`${sandbox.url}/dashboard/app.css`)).status).toBe(200);
    for (const path of ['/dashboard/js/nope.js', '/dashboard/js/..%2Fdashboard-route.js'])
      expect((await fetch(`${sandbox.url}${path}`)).status).toBe(404);
    expect((await fetch(`${sandbox.url}/v1/sandbox/state`)).status).toBe(401);
  });

  it('state: users with a bounded score history, watches, deliveries newest first; 304 while unchanged', async () => {
    await api.identify('charted', { plan: 'pro' });
    for (let i = 0; i < 70; i++) {
      (sandbox.clock as ReturnType<typeof createManualClock>).advance(60_000);
      await api.track({ userId: 'charted', event: i % 2 === 0 ? 'login' : 'seat_removed' });
    }
    const headers = { authorization: `Bearer ${sandbox.apiKey}` };
    const first = await fetch(`${sandbox.url}/v1/sandbox/state`, { headers });
    const etag = first.headers.get('etag')!;
    const state = await client.getState();
    const charted = state.users.find((user) => user.userId === 'charted')!;
    expect(charted.history).toHaveLength(60);
    expect(charted.history.at(-1)!.at).toBe(sandbox.clock.now());
    expect(charted.recentEvents).toHaveLength(5);
    expect(state.clock).toEqual({
      mode: 'manual',
      now: new Date(sandbox.clock.now()).toISOString(),
    });
    expect(state.deliveries[0]!.id).toBe(sandbox.deliveries.list().at(-1)!.id);
    expect(state.watches.map((watch) => watch.userId)).toContain('tested');
    const again = await fetch(`${sandbox.url}/v1/sandbox/state`, {
      headers: { ...headers, 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    await api.track({ userId: 'charted', event: 'login' });
    const changed = await fetch(`${sandbox.url}/v1/sandbox/state`, {
      headers: { ...headers, 'if-none-match': etag },
    });
    expect(changed.status).toBe(200);
  });
});
