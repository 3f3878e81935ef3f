import { describe, expect, it, vi } from 'vitest';
import { createTestDelivery } from '../testing.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { Receiver, ReceiverOptions } from '../receiver/types.js';

// `waitUntil` is called before the alert is accepted; a throwing one accepts nothing; a
// `Request` whose body was already read is answered RAW_BODY_MISSING.
const SECRET = 'whsec_hand_off_9d1c';
const NOW_MS = Date.UTC(2026, 3, 2, 9, 30, 0);

let sequence = 0;
function request(init: { method?: string } = {}): Request {
  sequence++;
  const { headers, body } = createTestDelivery(
    { userId: `user_${sequence}`, triggeredAt: new Date(NOW_MS - sequence).toISOString() },
    { secret: SECRET, timestamp: NOW_MS / 1000 },
  );
  return new Request('http://127.0.0.1/webhooks/churn-risk', {
    method: init.method ?? 'POST',
    headers: headers,
    body: body,
  });
}

function make(options: Partial<ReceiverOptions> = {}): Receiver {
  return createReceiver({
    secret: SECRET,
    now: () => NOW_MS,
    retries: { backoffMs: () => 0 },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    ...options,
  });
}

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  const json = (await response.json()) as { error: { code: string; message: string } };
  return json.error;
}

describe('waitUntil hand-off: before acceptance', () => {
  it('calls waitUntil before the alert is accepted, with a promise that settles after the handlers', async () => {
    const receiver = make();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    receiver.on('churn_risk_alert', async () => {
      await held;
      finished = true;
    });
    const seen: { accepted: number; running: number }[] = [];
    const kept: Promise<unknown>[] = [];
    const response = await receiver.fetch(request(), {
      waitUntil: (promise) => {
        seen.push({ accepted: receiver.stats.accepted, running: receiver.stats.running });
        kept.push(promise);
      },
    });
    expect(response.status).toBe(202);
    expect(seen).toEqual([{ accepted: 0, running: 0 }]); // called before anything was claimed
    expect(finished).toBe(false);
    release();
    await kept[0];
    expect(finished).toBe(true);
  });

  it('accepts nothing when waitUntil throws: 500 INTERNAL_ERROR, and the redelivery is processed as new', async () => {
    const receiver = make();
    const handler = vi.fn();
    receiver.on('churn_risk_alert', handler);
    const rejected = vi.fn();
    receiver.onRejected(rejected);
    const first = request();
    const again = first.clone();
    // The natural mistake: an unbound method whose `this` is lost.
    const ctx = {
      kept: [] as Promise<unknown>[],
      waitUntil(this: { kept: Promise<unknown>[] }, promise: Promise<unknown>) {
        this.kept.push(promise);
      },
    };
    const { waitUntil } = ctx;
    const response = await receiver.fetch(first, { waitUntil: waitUntil });
    expect(response.status).toBe(500);
    const error = await errorOf(response);
    expect(error.code).toBe('INTERNAL_ERROR');
    expect(error.message).toMatch(/waitUntil/);
    expect(error.message).not.toContain(SECRET);
    expect(rejected).toHaveBeenCalledWith(
      expect.objectContaining({ status: 500, code: 'INTERNAL_ERROR' }),
    );
    await receiver.drain();
    expect(handler).not.toHaveBeenCalled();
    expect(receiver.stats.accepted).toBe(0);

    const redelivered = await receiver.fetch(again, { waitUntil: (p) => ctx.waitUntil(p) });
    expect(redelivered.status).toBe(202);
    expect(await redelivered.json()).toEqual({ received: true });
    await Promise.all(ctx.kept);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('applies the same rule to handle({ waitUntil })', async () => {
    const receiver = make({ mode: 'sync' });
    const handler = vi.fn();
    receiver.on('churn_risk_alert', handler);
    const delivery = request();
    const body = await delivery.clone().text();
    const input = { method: 'POST', headers: delivery.headers, body };
    const failed = await receiver.handle({
      ...input,
      waitUntil: () => {
        throw new TypeError('Illegal invocation');
      },
    });
    expect(failed.status).toBe(500);
    expect(handler).not.toHaveBeenCalled();
    const ok = await receiver.handle(input);
    expect(ok.status).toBe(202);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('settles the kept promise at once for a duplicate', async () => {
    const receiver = make();
    receiver.on('churn_risk_alert', () => undefined);
    const delivery = request();
    const copy = delivery.clone();
    await receiver.fetch(delivery);
    await receiver.drain();
    const kept: Promise<unknown>[] = [];
    const response = await receiver.fetch(copy, { waitUntil: (p) => kept.push(p) });
    expect(await response.json()).toEqual({ received: true, duplicate: true });
    await expect(
      Promise.race([kept[0], new Promise((r) => setTimeout(() => r('pending'), 1000))]),
    ).resolves.not.toBe('pending');
  });

  it('does not call waitUntil for refused deliveries', async () => {
    const receiver = make();
    const waitUntil = vi.fn();
    const response = await receiver.fetch(request({ method: 'PUT' }), { waitUntil });
    expect(response.status).toBe(405);
    expect(waitUntil).not.toHaveBeenCalled();
  });
});

describe('a Request whose body was already read', () => {
  it('answers 500 RAW_BODY_MISSING naming the fix when bodyUsed', async () => {
    const receiver = make();
    const rejected = vi.fn();
    receiver.onRejected(rejected);
    const delivery = request();
    await delivery.json(); // a middleware parsed it
    const response = await receiver.fetch(delivery);
    expect(response.status).toBe(500);
    const error = await errorOf(response);
    expect(error.code).toBe('RAW_BODY_MISSING');
    expect(error.message).toMatch(/clone\(\)/);
    expect(rejected).toHaveBeenCalledWith(
      expect.objectContaining({ status: 500, code: 'RAW_BODY_MISSING' }),
    );
  });

  it('answers 500 RAW_BODY_MISSING when the body stream is locked', async () => {
    const receiver = make();
    const delivery = request();
    const reader = delivery.body!.getReader(); // something holds the stream
    const response = await receiver.fetch(delivery);
    expect(response.status).toBe(500);
    expect((await errorOf(response)).code).toBe('RAW_BODY_MISSING');
    reader.releaseLock();
  });
});
