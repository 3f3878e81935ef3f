import { createTestDelivery } from '@churn-risk/core/testing';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type ExampleApp } from '../src/app.js';

const SECRET = 'whsec_example_express';

describe('express example app (in process)', () => {
  let server: Server | undefined;
  let example: ExampleApp | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await example?.receiver.close({ timeoutMs: 5000 });
  });

  async function start(): Promise<string> {
    example = createApp({ secret: SECRET });
    const listening = example.app.listen(0, '127.0.0.1');
    server = listening;
    await new Promise((resolve) => listening.once('listening', resolve));
    return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  }

  it('keeps parsing JSON on its own routes', async () => {
    const base = await start();
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok' });
    const created = await fetch(`${base}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'call Acme' }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ text: 'call Acme' });
    const list = (await (await fetch(`${base}/api/notes`)).json()) as { notes: unknown[] };
    expect(list.notes).toHaveLength(1);
  });

  it('answers GET /healthz 200 while it takes deliveries, 503 once the receiver is closed', async () => {
    const base = await start();
    const up = await fetch(`${base}/healthz`);
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({ ok: true, closed: false, queued: 0, running: 0 });
    await example?.receiver.close();
    const down = await fetch(`${base}/healthz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ ok: false, closed: true });
  });

  it('records a signed delivery and serves it at GET /alerts', async () => {
    const base = await start();
    const { headers, body, alert } = createTestDelivery({ userId: 'acme_ops' }, { secret: SECRET });
    const response = await fetch(`${base}/webhooks/churn-risk`, { method: 'POST', headers, body });
    expect(response.status).toBe(202);
    await example?.receiver.drain({ timeoutMs: 5000 });
    const alerts = (await (await fetch(`${base}/alerts`)).json()) as { alerts: unknown[] };
    expect(alerts.alerts).toEqual([alert]);
  });

  it('refuses a delivery signed with another secret and records nothing', async () => {
    const base = await start();
    const { headers, body } = createTestDelivery({}, { secret: 'someone-else' });
    const response = await fetch(`${base}/webhooks/churn-risk`, { method: 'POST', headers, body });
    expect(response.status).toBe(401);
    expect(example?.alerts).toEqual([]);
  });
});
