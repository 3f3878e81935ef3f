import { createTestDelivery } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type ExampleApp } from '../src/app.js';

const SECRET = 'whsec_example_fastify';

describe('fastify example app (in process)', () => {
  let example: ExampleApp | undefined;

  afterEach(async () => {
    await example?.app.close();
  });

  it('answers GET /healthz 200 while it takes deliveries, 503 once the receiver is closed', async () => {
    example = await createApp({ secret: SECRET });
    const { app, receiver } = example;
    const up = await app.inject({ method: 'GET', url: '/healthz' });
    expect(up.statusCode).toBe(200);
    expect(up.json()).toEqual({ ok: true, closed: false, queued: 0, running: 0 });
    await receiver.close();
    const down = await app.inject({ method: 'GET', url: '/healthz' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ ok: false, closed: true });
  });

  it('keeps parsing JSON on its own routes', async () => {
    example = await createApp({ secret: SECRET });
    const { app } = example;
    expect((await app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });
    const created = await app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { text: 'call Acme' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ text: 'call Acme' });
    const list = (await app.inject({ method: 'GET', url: '/api/notes' })).json<{
      notes: unknown[];
    }>();
    expect(list.notes).toHaveLength(1);
  });

  it('records a signed delivery and serves it at GET /alerts', async () => {
    example = await createApp({ secret: SECRET });
    const { app, receiver } = example;
    const { headers, body, alert } = createTestDelivery({ userId: 'acme_ops' }, { secret: SECRET });
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/churn-risk',
      headers,
      payload: body,
    });
    expect(response.statusCode).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect((await app.inject({ method: 'GET', url: '/alerts' })).json()).toEqual({
      alerts: [alert],
    });
  });

  it('refuses a delivery signed with another secret and records nothing', async () => {
    example = await createApp({ secret: SECRET });
    const { headers, body } = createTestDelivery({}, { secret: 'someone-else' });
    const response = await example.app.inject({
      method: 'POST',
      url: '/webhooks/churn-risk',
      headers,
      payload: body,
    });
    expect(response.statusCode).toBe(401);
    expect(example.alerts).toEqual([]);
  });
});
