import { createTestDelivery, signPayload } from '@churn-risk/core/testing';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  bundleExample,
  SECOND,
  startExample,
  startHooks,
  until,
  wranglerSettings,
  type HookCall,
  type Hooks,
} from './example-workerd.js';

// The example in queue mode, in workerd through miniflare (its Queues, its D1), with
// wrangler.toml's producer, consumer, dead-letter queue and D1 database. The CRM and the ops
// webhook the handlers call are a node:http server here (example-workerd.ts).

const SECRET = 'whsec_example_queue_mode';
let mf: Miniflare;
let url: URL;
let hooks: Hooks;
let sequence = 0;

beforeAll(async () => {
  hooks = await startHooks();
  ({ mf, url } = await startExample(await bundleExample(), {
    secret: SECRET,
    crm: `${hooks.url}/crm`,
    ops: `${hooks.url}/ops`,
  }));
});

afterAll(async () => {
  await mf?.dispose();
  await hooks?.close();
});

beforeEach(() => {
  hooks.answer = () => 200;
  hooks.hold = () => false;
});

function signed(userId: string): { headers: Record<string, string>; body: string; id: string } {
  const triggeredAt = new Date(Date.UTC(2026, 2, 1) + ++sequence * 1000).toISOString();
  const delivery = createTestDelivery({ userId, triggeredAt }, { secret: SECRET });
  return { ...delivery, id: `${userId}:${triggeredAt}` };
}

/** POSTs to the first isolate (over its port), or the second (`other`). */
async function post(
  delivery: { headers: Record<string, string>; body: string },
  other = false,
): Promise<{ status: number; body: unknown }> {
  const init = { method: 'POST', headers: delivery.headers, body: delivery.body };
  const target = new URL('/webhooks/churn-risk', url);
  const response = other
    ? await (await mf.getWorker(SECOND)).fetch(target, init)
    : await fetch(target, init);
  return { status: response.status, body: await response.json() };
}

const callsFor = (path: string, id: string): HookCall[] =>
  hooks.calls.filter((c) => c.path === path && c.body.alertId === id);

async function storedAttempt(id: string): Promise<unknown> {
  const kv = await mf.getKVNamespace('ALERTS');
  const { metadata } = await kv.getWithMetadata(`alert:${id}`);
  return (metadata as { attempt?: number } | null)?.attempt;
}

async function failedRows(id: string): Promise<{ tries: number; succeeded: string }[]> {
  const db = await mf.getD1Database(wranglerSettings().d1);
  const { results } = await db
    .prepare('SELECT tries, succeeded FROM churn_risk_failed WHERE alert_id = ?1')
    .bind(id)
    .all<{ tries: number; succeeded: string }>();
  return results;
}

describe('examples/cloudflare-worker in queue mode (workerd, miniflare Queues and D1)', () => {
  it('declares the producer, the consumer, the dead-letter queue and D1 in wrangler.toml', () => {
    const settings = wranglerSettings();
    expect(settings.producer).toEqual({
      binding: 'CHURN_RISK_ALERTS',
      queue: 'churn-risk-alerts',
    });
    expect(settings.consumer.queue).toBe('churn-risk-alerts');
    expect(settings.deadLetterQueue).toBe('churn-risk-alerts-failed');
    expect(settings.d1).toBe('CHURN_RISK_DB');
    expect(settings.flags).not.toContain('nodejs_compat');
  });

  it('handles the alert after the request that accepted it has ended', async () => {
    const delivery = signed('user_q_after');
    hooks.hold = (body) => body.alertId === delivery.id;
    const answer = await post(delivery); // the whole response has been read: the request is over
    expect(answer).toEqual({ status: 202, body: { received: true } });
    // The CRM handler runs in the consumer's invocation, and is held there until released.
    await until('the CRM call', () => (hooks.held === 1 ? true : undefined));
    expect(callsFor('/crm', delivery.id)).toHaveLength(1);
    hooks.release();
    await until('the stored alert', async () => storedAttempt(delivery.id));
    expect(callsFor('/ops', delivery.id)).toEqual([]);
  });

  it('a handler that fails twice then succeeds is handled once; the other handler is not run again; a redelivery to another isolate is a duplicate', async () => {
    const delivery = signed('user_q_flaky');
    hooks.answer = (body) => (body.alertId === delivery.id && Number(body.attempt) < 2 ? 503 : 200);
    expect(await post(delivery)).toEqual({ status: 202, body: { received: true } });
    expect(await post(delivery, true)).toEqual({
      status: 202,
      body: { received: true, duplicate: true },
    });
    await until('the third CRM call', () =>
      callsFor('/crm', delivery.id).length >= 3 ? true : undefined,
    );
    // Handled once: the CRM took it at the third try, and nothing runs after it.
    expect(callsFor('/crm', delivery.id).map((c) => c.body.attempt)).toEqual([0, 1, 2]);
    // The store handler succeeded at the first try and was not run again (a later run would
    // have overwritten the attempt it recorded).
    expect(await storedAttempt(delivery.id)).toBe(0);
    expect(await post(delivery, true)).toEqual({
      status: 202,
      body: { received: true, duplicate: true },
    });
    expect(callsFor('/ops', delivery.id)).toEqual([]);
    expect(await failedRows(delivery.id)).toEqual([]);
  }, 60_000);

  it('a handler that always fails ends in the failed store, with onError called once', async () => {
    const delivery = signed('user_q_broken');
    hooks.answer = (body) => (body.alertId === delivery.id ? 500 : 200);
    expect((await post(delivery)).status).toBe(202);
    const [report] = await until(
      'onError',
      () => {
        const calls = callsFor('/ops', delivery.id);
        return calls.length > 0 ? calls : undefined;
      },
      60_000,
    );
    expect(report?.body.error).toContain('The CRM answered 500');
    const rows = await failedRows(delivery.id);
    expect(rows).toEqual([{ tries: 4, succeeded: '["store"]' }]);
    expect(callsFor('/crm', delivery.id).map((c) => c.body.attempt)).toEqual([0, 1, 2, 3]);
    // Another alert goes all the way through after it: no further try of this one, no second onError.
    const next = signed('user_q_after_broken');
    expect((await post(next)).status).toBe(202);
    await until('the next alert', async () => storedAttempt(next.id));
    await until('the next CRM call', () =>
      callsFor('/crm', next.id).length > 0 ? true : undefined,
    );
    expect(callsFor('/ops', delivery.id)).toHaveLength(1);
    expect(callsFor('/crm', delivery.id)).toHaveLength(4);
  }, 90_000);

  it('answers 503 OVERLOADED when the Queue refuses the send, and claims nothing', async () => {
    // Cloudflare Queues take messages of at most 128 KB: a larger (valid, signed) alert is refused.
    const userId = 'user_q_too_big';
    const triggeredAt = new Date(Date.UTC(2026, 3, 1)).toISOString();
    const delivery = createTestDelivery(
      { userId, triggeredAt, recommendation: 'x'.repeat(200_000) },
      { secret: SECRET },
    );
    const answer = await post(delivery);
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ error: { code: 'OVERLOADED' } });
    const db = await mf.getD1Database(wranglerSettings().d1);
    const claim = await db
      .prepare('SELECT id FROM churn_risk_identities WHERE id = ?1')
      .bind(`${userId}:${triggeredAt}`)
      .first();
    expect(claim).toBeNull();
  });

  it.each([
    ['401 INVALID_SIGNATURE', 401, 'INVALID_SIGNATURE'],
    ['401 TIMESTAMP_OUT_OF_TOLERANCE', 401, 'TIMESTAMP_OUT_OF_TOLERANCE'],
    ['400 INVALID_PAYLOAD', 400, 'INVALID_PAYLOAD'],
  ])('answers %s and sends nothing', async (name, status, code) => {
    const { body } = signed(`user_q_${code.toLowerCase()}`);
    let payload = body;
    let timestamp = Date.now() / 1000;
    if (code === 'INVALID_PAYLOAD') payload = JSON.stringify({ event: 'churn_risk_alert' });
    if (code === 'TIMESTAMP_OUT_OF_TOLERANCE') timestamp -= 3600;
    const secret = code === 'INVALID_SIGNATURE' ? 'whsec_other' : SECRET;
    const signature = signPayload({ body: payload, secret, timestamp });
    const answer = await post({
      headers: {
        'x-service-signature': signature.signature,
        'x-service-timestamp': signature.timestamp,
      },
      body: payload,
    });
    expect([answer.status, (answer.body as { error: { code: string } }).error.code], name).toEqual([
      status,
      code,
    ]);
  });

  it('answers 405 to a GET', async () => {
    const response = await fetch(new URL('/webhooks/churn-risk', url));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    await response.body?.cancel();
  });
});
