import { ChurnRiskClient } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveAlert, eventually } from '../../../test/e2e/drive-alert.js';
import { startNestExample, type NestProcess } from './nest-process.js';

// The Nest app runs as its own process, started like `npm start`; the sandbox service signs and
// POSTs real alerts to it. Nest's JSON body parser is on for the whole app (rawBody: true), and
// the webhook verifies the bytes it kept.

const SECRET = 'whsec_example_nestjs_e2e';

let sandbox: Sandbox;
let app: NestProcess | undefined;

beforeAll(async () => {
  sandbox = await createSandbox({ webhookSecret: SECRET });
  app = await startNestExample({ secret: SECRET });
});

afterAll(async () => {
  app?.cleanup();
  await sandbox.close();
});

function url(path: string): string {
  if (app === undefined) throw new Error('the example is not running');
  return `${app.url}${path}`;
}

async function postNote(text: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url('/notes'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  return { status: response.status, body: await response.json() };
}

async function processedAlerts(): Promise<unknown[]> {
  const response = await fetch(url('/alerts'));
  return ((await response.json()) as { alerts: unknown[] }).alerts;
}

describe('NestJS example (spawned) and the sandbox service', () => {
  it('takes the alert the sandbox delivers, runs the handler once, and keeps parsing JSON', async () => {
    const record = await driveAlert(sandbox, url('/webhooks/churn-risk'), 'nest_e2e_user');
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]).toMatchObject({ status: 202 });

    await app?.waitForLines(/^processed nest_e2e_user$/);
    expect(await processedAlerts()).toEqual([record.alert]);
    expect(record.alert).toMatchObject({ userId: 'nest_e2e_user', score: 0.75, tier: 'high' });

    // The app's own route still gets the object Nest's JSON parser made.
    const note = await postNote('call nest_e2e_user');
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({ text: 'call nest_e2e_user' });
    const list = (await (await fetch(url('/notes'))).json()) as { notes: unknown[] };
    expect(list.notes).toContainEqual(note.body);
  });

  it('answers a tampered delivery 401, runs nothing, and the JSON route still gets its body', async () => {
    const { headers, body } = createTestDelivery({ userId: 'nest_tampered' }, { secret: SECRET });
    const tampered = body.replace('"nest_tampered"', '"nest_tampereD"'); // still valid JSON
    expect(tampered).not.toBe(body);
    const response = await fetch(url('/webhooks/churn-risk'), {
      method: 'POST',
      headers,
      body: tampered,
    });
    expect(response.status).toBe(401);
    const answer = (await response.json()) as { error: { code: string; message: string } };
    expect(answer.error.code).toBe('INVALID_SIGNATURE');
    expect(JSON.stringify(answer)).not.toContain(SECRET);

    const note = await postNote('still parsed');
    expect(note).toEqual({ status: 201, body: { id: expect.any(String), text: 'still parsed' } });
    const invalid = await postNote('');
    expect(invalid.status).toBe(400); // the controller saw the parsed object, and its empty text

    const alerts = (await processedAlerts()) as { userId: string }[];
    expect(alerts.map((alert) => alert.userId)).not.toContain('nest_tampered');
    expect(alerts.map((alert) => alert.userId)).not.toContain('nest_tampereD');
  });

  it('answers 401 to a delivery the sandbox signs with a wrong secret, and the sandbox retries it', async () => {
    const chaos = await createSandbox({
      webhookSecret: SECRET,
      chaos: { badSignatureRate: 1, seed: 7 },
    });
    try {
      const client = new ChurnRiskClient({ apiKey: chaos.apiKey, baseUrl: chaos.url });
      await client.identify('nest_bad_signature', { plan: 'pro', mrr: 99 });
      await client.watch('nest_bad_signature', {
        threshold: 0.7,
        webhook: url('/webhooks/churn-risk'),
        cooldown: '1h',
      });
      await client.trackBulk([
        { userId: 'nest_bad_signature', event: 'payment_failed' },
        { userId: 'nest_bad_signature', event: 'payment_failed' },
      ]);
      const record = await eventually(
        () =>
          chaos.deliveries
            .list()
            .find(
              (entry) => entry.alert.userId === 'nest_bad_signature' && entry.attempts.length > 0,
            ),
        'the first try to be answered',
      );
      expect(record.attempts[0]).toMatchObject({ status: 401, badSignature: true });
      expect(record.state).toBe('pending'); // retried on the usual schedule
      const alerts = (await processedAlerts()) as { userId: string }[];
      expect(alerts.map((alert) => alert.userId)).not.toContain('nest_bad_signature');
    } finally {
      await chaos.close();
    }
  });

  it('serves liveness at GET /health and readiness at GET /healthz', async () => {
    const health = await fetch(url('/health'));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(url('/healthz'));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true, closed: false });
  });

  it('does not mount the webhook on other methods: Nest answers GET with its 404', async () => {
    const response = await fetch(url('/webhooks/churn-risk'));
    expect(response.status).toBe(404);
  });
});
