import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createSweepHandler } from '@churn-risk/next';

// The cron route that runs a durable queue's due alerts where no worker runs.

const SECRET = 'whsec_next_sweep';
const CRON_SECRET = 'cron_secret_0123456789abcdef';

function setup(available: () => boolean = () => true) {
  const store = createMemoryStore({ available });
  const receiver = createReceiver({
    secret: SECRET,
    queue: createDurableQueue(store),
    consume: false,
  });
  const handled: string[] = [];
  receiver.on('churn_risk_alert', (alert) => void handled.push(alert.userId));
  return { store, receiver, handled };
}

const sweepRequest = (authorization?: string): Request =>
  new Request('http://localhost/api/churn-risk/sweep', {
    headers: authorization === undefined ? {} : { authorization },
  });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createSweepHandler', () => {
  it('runs the due alerts for a request with the cron bearer and answers what it did', async () => {
    const { receiver, handled } = setup();
    const { headers, body } = createTestDelivery({ userId: 'user_swept' }, { secret: SECRET });
    expect((await receiver.handle({ method: 'POST', headers, body })).status).toBe(202);
    const GET = createSweepHandler(receiver, { cronSecret: CRON_SECRET, budgetMs: 5_000 });
    const response = await GET(sweepRequest(`Bearer ${CRON_SECRET}`));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ completed: 1, retried: 0, failed: 0, left: 0 });
    expect(handled).toEqual(['user_swept']);
    await receiver.close();
  });

  it('answers 401 without the bearer, with a wrong one, or another scheme, and never echoes it', async () => {
    const { receiver, handled } = setup();
    const { headers, body } = createTestDelivery({ userId: 'user_kept' }, { secret: SECRET });
    await receiver.handle({ method: 'POST', headers, body });
    const GET = createSweepHandler(receiver, { cronSecret: CRON_SECRET });
    for (const authorization of [
      undefined,
      'Bearer wrong_secret_0123456789abcd',
      `Bearer ${CRON_SECRET}x`,
      `Basic ${CRON_SECRET}`,
      `Bearer  ${CRON_SECRET}`,
    ]) {
      const response = await GET(sweepRequest(authorization));
      expect(response.status, String(authorization)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.text()).not.toContain(CRON_SECRET);
    }
    expect(handled).toEqual([]);
    await receiver.close();
  });

  it('reads CRON_SECRET from the environment at each request, not at creation', async () => {
    const { receiver } = setup();
    const GET = createSweepHandler(receiver); // as `next build` loads it: no CRON_SECRET yet
    process.env.CRON_SECRET = CRON_SECRET;
    try {
      expect((await GET(sweepRequest(`Bearer ${CRON_SECRET}`))).status).toBe(200);
      expect((await GET(sweepRequest('Bearer another_secret_0123456789'))).status).toBe(401);
    } finally {
      delete process.env.CRON_SECRET;
    }
    await receiver.close();
  });

  it('answers 500 CRON_SECRET_MISSING and logs the fix when CRON_SECRET is not set', async () => {
    const { receiver, handled } = setup();
    const { headers, body } = createTestDelivery({ userId: 'user_waits' }, { secret: SECRET });
    await receiver.handle({ method: 'POST', headers, body });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const response = await createSweepHandler(receiver)(sweepRequest(`Bearer ${CRON_SECRET}`));
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { code: 'CRON_SECRET_MISSING' } });
    expect(errors).toHaveBeenCalledOnce();
    expect(String(errors.mock.calls[0]?.[0])).toMatch(/CRON_SECRET is not set/);
    expect(handled).toEqual([]);
    await receiver.close();
  });

  it('says a CRON_SECRET from the environment is too short, with its length and the minimum, never its value', async () => {
    const { receiver, handled } = setup();
    const { headers, body } = createTestDelivery({ userId: 'user_waits' }, { secret: SECRET });
    await receiver.handle({ method: 'POST', headers, body });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const GET = createSweepHandler(receiver);
    for (const short of ['cron_shrt', 'cron_15_chars__']) {
      process.env.CRON_SECRET = short;
      try {
        const response = await GET(sweepRequest(`Bearer ${short}`));
        expect(response.status).toBe(500);
        const text = await response.text();
        expect(text).not.toContain(short);
        const answer = JSON.parse(text) as { error: { code: string; message: string } };
        expect(answer.error.code).toBe('CRON_SECRET_INVALID');
        const length = String(short.length);
        expect(answer.error.message).toMatch(
          new RegExp(`CRON_SECRET is too short: ${length} characters, at least 16`),
        );
        const logged = String(errors.mock.lastCall?.[0]);
        expect(logged).toContain(answer.error.message);
        expect(logged).not.toContain(short);
      } finally {
        delete process.env.CRON_SECRET;
      }
    }
    expect(errors).toHaveBeenCalledTimes(2);
    expect(handled).toEqual([]); // nothing swept with an unusable secret
    await receiver.close();
  });

  it('refuses a too short cronSecret option at creation, with its length and the minimum', () => {
    const { receiver } = setup();
    const short = 'cron_12chars';
    let thrown: unknown;
    try {
      createSweepHandler(receiver, { cronSecret: short });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    const { message } = thrown as TypeError;
    expect(message).toMatch(/cronSecret is too short: 12 characters, at least 16/);
    expect(message).not.toContain(short);
    expect(() => createSweepHandler(receiver, { cronSecret: 'has a space 0123456789' })).toThrow(
      /visible ASCII/,
    );
  });

  it('answers 503 naming the store when it does not answer', async () => {
    let up = true;
    const { receiver } = setup(() => up);
    const GET = createSweepHandler(receiver, { cronSecret: CRON_SECRET });
    up = false;
    const response = await GET(sweepRequest(`Bearer ${CRON_SECRET}`));
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('60');
    expect(await response.json()).toMatchObject({
      error: {
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(/memory store/) as string,
      },
    });
    await receiver.close();
  });

  it("refuses a budget under a sweep's minimum and unknown options", () => {
    const { receiver } = setup();
    expect(() => createSweepHandler(receiver, { cronSecret: CRON_SECRET, budgetMs: 10 })).toThrow(
      TypeError,
    );
    expect(() =>
      createSweepHandler(receiver, { cronSecret: CRON_SECRET, budget: 5_000 } as never),
    ).toThrow(/did you mean budgetMs\?/);
  });

  it('refuses the former option name secret, naming cronSecret', () => {
    const { receiver } = setup();
    expect(() => createSweepHandler(receiver, { secret: CRON_SECRET } as never)).toThrow(
      new TypeError(
        'createSweepHandler does not know the option "secret" (it is called cronSecret). ' +
          'Known options: budgetMs, cronSecret.',
      ),
    );
  });
});
