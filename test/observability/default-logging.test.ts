import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import fc from 'fast-check';
import express from 'express';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { createReceiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createMiddleware } from '@churn-risk/express';
import { spawnTs } from '../support/node-process.js';

/**
 * Without a `logger`, each 5xx answer goes to console.error with its code
 * and fix, and the 401, 413 and 400 refusals are summarised in at most one line a minute for each
 * status (count and codes), the last one written when its minute ends.
 */

const SECRET = 'whsec_default_logging_secret_0123456789';
const START = Date.parse('2026-05-04T10:00:00.000Z');

let consoleSpies: Record<'debug' | 'info' | 'warn' | 'error' | 'log', MockInstance>;

beforeEach(() => {
  consoleSpies = {
    debug: vi.spyOn(console, 'debug').mockImplementation(() => undefined),
    info: vi.spyOn(console, 'info').mockImplementation(() => undefined),
    warn: vi.spyOn(console, 'warn').mockImplementation(() => undefined),
    error: vi.spyOn(console, 'error').mockImplementation(() => undefined),
    log: vi.spyOn(console, 'log').mockImplementation(() => undefined),
  };
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Each console.error call as the text a terminal shows (message and inspected fields). */
function errorLines(): string[] {
  return consoleSpies.error.mock.calls.map((args: unknown[]) =>
    args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg, { depth: 5 }))).join(' '),
  );
}

/** A fake clock for the receiver (`now`): timestamps are checked and the minute counted on it. */
function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let time = START;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

/** A delivery signed at the clock's time, with `secret` (another one makes it forged). */
function signedAt(now: number, secret: string, userId = 'user_logged') {
  const delivery = createTestDelivery(
    { userId, triggeredAt: new Date(now).toISOString() },
    { secret, timestamp: Math.floor(now / 1000) },
  );
  return { method: 'POST', headers: delivery.headers, body: delivery.body };
}

describe('default logging of 401 refusals: one summary line a minute at most', () => {
  it('writes the first 401 at once, then counts the codes until a minute has passed', async () => {
    const clock = fakeClock();
    const receiver = createReceiver({ secret: SECRET, now: clock.now });
    receiver.on('churn_risk_alert', () => undefined);

    expect((await receiver.handle(signedAt(clock.now(), 'whsec_wrong'))).status).toBe(401);
    expect(consoleSpies.error).toHaveBeenCalledOnce();
    expect(consoleSpies.error.mock.calls[0]).toEqual([
      expect.stringMatching(
        /^\[churn-risk\] 1 delivery refused with 401 since 2026-05-04T10:00:00\.000Z \(INVALID_SIGNATURE x1\)\. INVALID_SIGNATURE: `secret` is not this endpoint's signing secret/,
      ),
      { status: 401, count: 1, codes: { INVALID_SIGNATURE: 1 } },
    ]);

    // 59.999 s of refusals: counted, not written
    for (let i = 0; i < 5; i += 1) {
      clock.advance(10_000);
      await receiver.handle(signedAt(clock.now(), 'whsec_wrong', `user_${i}`));
    }
    const { headers, body } = signedAt(clock.now(), SECRET);
    const unsigned = { ...headers };
    delete unsigned['x-service-signature'];
    await receiver.handle({ method: 'POST', headers: unsigned, body });
    clock.advance(9_999);
    await receiver.handle(signedAt(clock.now(), 'whsec_wrong', 'user_last_of_minute'));
    expect(consoleSpies.error).toHaveBeenCalledOnce();

    // other answers in between write nothing: 202, duplicate, 405
    const genuine = signedAt(clock.now(), SECRET, 'user_genuine');
    expect((await receiver.handle(genuine)).status).toBe(202);
    expect((await receiver.handle(genuine)).status).toBe(202);
    expect((await receiver.handle({ method: 'GET', headers: {}, body: null })).status).toBe(405);
    await receiver.drain({ timeoutMs: 5_000 });
    expect(consoleSpies.error).toHaveBeenCalledOnce();

    // a minute after the first line: the next 401 writes the summary of everything since
    clock.advance(1);
    await receiver.handle(signedAt(clock.now(), 'whsec_wrong', 'user_next_minute'));
    expect(consoleSpies.error).toHaveBeenCalledTimes(2);
    expect(consoleSpies.error.mock.calls[1]).toEqual([
      expect.stringContaining(
        '8 deliveries refused with 401 since 2026-05-04T10:00:10.000Z (INVALID_SIGNATURE x7, MISSING_SIGNATURE x1)',
      ),
      { status: 401, count: 8, codes: { INVALID_SIGNATURE: 7, MISSING_SIGNATURE: 1 } },
    ]);
    expect(errorLines()[1]).toContain('MISSING_SIGNATURE: a proxy dropped the signature header');

    // then quiet again for a minute, and nothing ever went to the other console methods
    clock.advance(30_000);
    await receiver.handle(signedAt(clock.now(), 'whsec_wrong'));
    expect(consoleSpies.error).toHaveBeenCalledTimes(2);
    for (const level of ['debug', 'info', 'warn', 'log'] as const) {
      expect(consoleSpies[level]).not.toHaveBeenCalled();
    }
  });

  it('names a stale timestamp, and a clock set back does not silence the summary', async () => {
    const clock = fakeClock();
    const receiver = createReceiver({ secret: SECRET, now: clock.now });
    await receiver.handle(signedAt(clock.now() - 3_600_000, SECRET));
    expect(errorLines()[0]).toContain(
      "(TIMESTAMP_OUT_OF_TOLERANCE x1). TIMESTAMP_OUT_OF_TOLERANCE: this server's clock is off",
    );
    clock.advance(-120_000);
    await receiver.handle(signedAt(clock.now(), 'whsec_wrong'));
    expect(consoleSpies.error).toHaveBeenCalledTimes(2);
  });

  it('writes nothing of it when a logger is given: that logger gets each refusal at warn', async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const receiver = createReceiver({ secret: SECRET, logger });
    await receiver.handle(signedAt(Date.now(), 'whsec_wrong'));
    await receiver.handle(signedAt(Date.now(), 'whsec_wrong'));
    expect(logger.warn).toHaveBeenCalledTimes(2);
    expect(logger.error).not.toHaveBeenCalled();
    expect(consoleSpies.error).not.toHaveBeenCalled();
  });
});

/** A correctly signed body at the clock's time that is not a valid alert: answered 400. */
function invalidAt(
  now: number,
  secret = SECRET,
): { method: string; headers: Record<string, string>; body: string } {
  const body = JSON.stringify({ event: 'churn_risk_alert', userId: 'user_invalid', score: 7 });
  const timestamp = String(Math.floor(now / 1000));
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return {
    method: 'POST',
    headers: { 'x-service-signature': `sha256=${signature}`, 'x-service-timestamp': timestamp },
    body,
  };
}

/** A body over the receiver's `maxBodyBytes` of 1,000: answered 413. */
function tooLargeAt(now: number): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const delivery = signedAt(now, SECRET);
  return { ...delivery, body: `${delivery.body}${' '.repeat(1_000)}` };
}

describe('default logging of 400 and 413 refusals: summarised like 401, per status', () => {
  it('writes the first of each status at once, then one line a minute for each, with its cause', async () => {
    const clock = fakeClock();
    const receiver = createReceiver({ secret: SECRET, now: clock.now, maxBodyBytes: 1_000 });
    receiver.on('churn_risk_alert', () => undefined);
    const invalid = invalidAt(clock.now());
    expect((await receiver.handle(invalid)).status).toBe(400);
    expect((await receiver.handle(tooLargeAt(clock.now()))).status).toBe(413);
    expect((await receiver.handle(signedAt(clock.now(), 'whsec_wrong'))).status).toBe(401);
    expect(consoleSpies.error.mock.calls).toEqual([
      [
        expect.stringMatching(
          /^\[churn-risk\] 1 delivery refused with 400 since 2026-05-04T10:00:00\.000Z \(INVALID_PAYLOAD x1\)\. INVALID_PAYLOAD: a signed body that is not a valid alert/,
        ),
        { status: 400, count: 1, codes: { INVALID_PAYLOAD: 1 } },
      ],
      [
        expect.stringMatching(
          /^\[churn-risk\] 1 delivery refused with 413 since .* \(PAYLOAD_TOO_LARGE x1\)\. PAYLOAD_TOO_LARGE: a body over `maxBodyBytes`/,
        ),
        { status: 413, count: 1, codes: { PAYLOAD_TOO_LARGE: 1 } },
      ],
      [
        expect.stringContaining('1 delivery refused with 401'),
        expect.objectContaining({ status: 401 }),
      ],
    ]);

    // within the minute: counted, not written, whatever the status
    clock.advance(20_000);
    for (let i = 0; i < 3; i += 1) await receiver.handle(invalidAt(clock.now()));
    await receiver.handle(tooLargeAt(clock.now()));
    expect(consoleSpies.error).toHaveBeenCalledTimes(3);

    // a minute after its line, the next 400 writes the 400 summary only
    clock.advance(40_000);
    await receiver.handle(invalidAt(clock.now()));
    expect(consoleSpies.error).toHaveBeenCalledTimes(4);
    expect(consoleSpies.error.mock.calls[3]).toEqual([
      expect.stringContaining(
        '4 deliveries refused with 400 since 2026-05-04T10:00:20.000Z (INVALID_PAYLOAD x4)',
      ),
      { status: 400, count: 4, codes: { INVALID_PAYLOAD: 4 } },
    ]);
    const text = errorLines().join('\n');
    expectNoSecretIn(text, invalid);
    expect(text).not.toContain('score'); // nothing of the body or of the refusal's message
    for (const level of ['debug', 'info', 'warn', 'log'] as const) {
      expect(consoleSpies[level]).not.toHaveBeenCalled();
    }
    await receiver.close();
  });
});

describe('a summary is written when its minute ends, not only at the next refusal', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('for 401, 413 and 400 alike, from a timer; nothing more when nothing is pending', async () => {
    vi.useFakeTimers({ now: START, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 1_000 });
    const refuse = async (): Promise<void> => {
      expect((await receiver.handle(signedAt(Date.now(), 'whsec_wrong'))).status).toBe(401);
      expect((await receiver.handle(tooLargeAt(Date.now()))).status).toBe(413);
      expect((await receiver.handle(invalidAt(Date.now()))).status).toBe(400);
    };
    await refuse(); // the first of each: written at once
    expect(consoleSpies.error).toHaveBeenCalledTimes(3);
    vi.advanceTimersByTime(10_000);
    await refuse();
    await refuse(); // counted: each status's minute ends 50 s from now
    vi.advanceTimersByTime(49_999);
    expect(consoleSpies.error).toHaveBeenCalledTimes(3);
    vi.advanceTimersByTime(1);
    expect(consoleSpies.error).toHaveBeenCalledTimes(6);
    const summaries = consoleSpies.error.mock.calls.slice(3).map((call: unknown[]) => call[1]);
    expect(summaries).toEqual([
      { status: 401, count: 2, codes: { INVALID_SIGNATURE: 2 } },
      { status: 413, count: 2, codes: { PAYLOAD_TOO_LARGE: 2 } },
      { status: 400, count: 2, codes: { INVALID_PAYLOAD: 2 } },
    ]);
    expect(errorLines()[3]).toContain(
      '2 deliveries refused with 401 since 2026-05-04T10:00:10.000Z',
    );
    // no refusal since: no timer, no line
    vi.advanceTimersByTime(10 * 60_000);
    expect(consoleSpies.error).toHaveBeenCalledTimes(6);
    expect(vi.getTimerCount()).toBe(0);
    // a refusal within a minute of that line waits for that minute's end
    await receiver.handle(invalidAt(Date.now()));
    expect(consoleSpies.error).toHaveBeenCalledTimes(7); // more than a minute after the last line
    await receiver.handle(invalidAt(Date.now()));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(60_000);
    expect(consoleSpies.error).toHaveBeenCalledTimes(8);
    expect(consoleSpies.error.mock.calls[7]?.[1]).toEqual({
      status: 400,
      count: 1,
      codes: { INVALID_PAYLOAD: 1 },
    });
    await receiver.close();
  });

  it('writes the pending summaries when the receiver closes, and cancels their timers', async () => {
    vi.useFakeTimers({ now: START, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 1_000 });
    expect((await receiver.handle(signedAt(Date.now(), 'whsec_wrong'))).status).toBe(401);
    expect((await receiver.handle(tooLargeAt(Date.now()))).status).toBe(413);
    expect(consoleSpies.error).toHaveBeenCalledTimes(2); // the first of each: at once
    vi.advanceTimersByTime(5_000);
    expect((await receiver.handle(signedAt(Date.now(), 'whsec_wrong'))).status).toBe(401);
    expect((await receiver.handle(signedAt(Date.now(), 'whsec_wrong'))).status).toBe(401);
    expect(vi.getTimerCount()).toBe(1);
    await receiver.close();
    expect(consoleSpies.error).toHaveBeenCalledTimes(3);
    expect(consoleSpies.error.mock.calls[2]?.[1]).toEqual({
      status: 401,
      count: 2,
      codes: { INVALID_SIGNATURE: 2 },
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the minute's timer is unref'd: it never keeps the process alive", async () => {
    const scheduled: { ms: number | undefined; timer: NodeJS.Timeout }[] = [];
    const real = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(
      (run: () => void, ms?: number): NodeJS.Timeout => {
        const timer = real(run, ms);
        scheduled.push({ ms, timer });
        return timer;
      },
    );
    const clock = fakeClock();
    const receiver = createReceiver({ secret: SECRET, now: clock.now });
    await receiver.handle(invalidAt(clock.now()));
    clock.advance(15_000);
    await receiver.handle(invalidAt(clock.now()));
    const minute = scheduled.filter(({ ms }) => ms === 45_000);
    expect(minute).toHaveLength(1);
    expect(minute[0]?.timer.hasRef()).toBe(false);
    for (const { timer } of scheduled) clearTimeout(timer);
    await receiver.close();
  });

  it('a process whose summary timer is pending exits on its own', { timeout: 60_000 }, async () => {
    const script = fileURLToPath(new URL('./refusal-summary-exit.ts', import.meta.url));
    const child = spawnTs(script, {});
    try {
      await child.waitForLines(/^pending$/);
      // Had the timer kept it alive, it would only exit when the minute ends (more than 45 s).
      const exited = await Promise.race([
        child.exited,
        new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 45_000)),
      ]);
      expect(exited).toBe(0);
    } finally {
      child.kill();
    }
  });
});

describe('default logging of 5xx answers: each one, with its code and fix', () => {
  it('RAW_BODY_MISSING: Express mounted after express.json()', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const app = express();
    app.use(express.json());
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const delivery = signedAt(Date.now(), SECRET);
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/churn-risk`, delivery);
      expect(response.status).toBe(500);
      expect(consoleSpies.error).toHaveBeenCalledOnce();
      const [line] = errorLines();
      expect(line).toContain("code: 'RAW_BODY_MISSING'");
      expect(line).toContain('status: 500');
      expect(line).toContain('before express.json()'); // the fix
      expectNoSecretIn(line ?? '', delivery);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('INTERNAL_ERROR: a waitUntil that throws', async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.on('churn_risk_alert', () => undefined);
    const delivery = signedAt(Date.now(), SECRET);
    const request = new Request('http://127.0.0.1/webhooks/churn-risk', delivery);
    const response = await receiver.fetch(request, {
      waitUntil: () => {
        throw new TypeError('Illegal invocation');
      },
    });
    expect(response.status).toBe(500);
    expect(consoleSpies.error).toHaveBeenCalledOnce();
    const [line] = errorLines();
    expect(line).toContain("code: 'INTERNAL_ERROR'");
    expect(line).toContain('(promise) => ctx.waitUntil(promise)'); // the fix
    expectNoSecretIn(line ?? '', delivery);
  });

  it('503 CLOSED and 500 HANDLER_FAILED, each answer its own line', async () => {
    const receiver = createReceiver({ secret: SECRET, mode: 'sync', retries: 0 });
    receiver.on('churn_risk_alert', () => {
      throw new Error('crm down');
    });
    const failing = signedAt(Date.now(), SECRET, 'user_failing');
    expect((await receiver.handle(failing)).status).toBe(500);
    const handlerFailed = errorLines().filter((line) => line.includes('HANDLER_FAILED'));
    expect(handlerFailed).toHaveLength(1);
    expect(handlerFailed[0]).toContain('Fix: see the handler error');

    await receiver.close();
    consoleSpies.error.mockClear();
    for (const userId of ['user_a', 'user_b']) {
      const delivery = signedAt(Date.now(), SECRET, userId);
      expect((await receiver.handle(delivery)).status).toBe(503);
    }
    expect(errorLines()).toEqual([
      expect.stringMatching(/refused with 503 CLOSED: .* Fix: none needed during a shutdown/),
      expect.stringMatching(/refused with 503 CLOSED: /),
    ]);
  });
});

/** The delivery's secret, its signature (sent and expected) and its body appear nowhere in `text`. */
function expectNoSecretIn(
  text: string,
  delivery: { headers: Record<string, string>; body: string },
  secret = SECRET,
): void {
  const timestamp = delivery.headers['x-service-timestamp'];
  const expected = createHmac('sha256', secret)
    .update(`${timestamp}.${delivery.body}`)
    .digest('hex');
  const sent = (delivery.headers['x-service-signature'] ?? '').slice('sha256='.length);
  for (const forbidden of [secret, expected, sent, delivery.body]) {
    if (forbidden !== '') expect(text).not.toContain(forbidden);
  }
}

describe('nothing the default log writes holds a secret, a signature or the body', () => {
  it('for wrong secrets, stale timestamps, shutdowns and failing handlers (200 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^whsec_[A-Za-z0-9]{12,32}$/),
        fc.constantFrom('wrong-secret', 'stale', 'closed', 'handler-fails'),
        fc.stringMatching(/^u_[a-z0-9]{1,10}$/),
        async (secret, kind, userId) => {
          consoleSpies.error.mockClear();
          const clock = fakeClock();
          const receiver = createReceiver({ secret, now: clock.now, mode: 'sync', retries: 0 });
          receiver.on('churn_risk_alert', () => {
            throw new Error('handler failed');
          });
          if (kind === 'closed') await receiver.close();
          const at = kind === 'stale' ? clock.now() - 3_600_000 : clock.now();
          const signingSecret = kind === 'wrong-secret' ? `${secret}x` : secret;
          const delivery = signedAt(at, signingSecret, userId);
          await receiver.handle(delivery);
          const text = errorLines().join('\n');
          expect(text.length).toBeGreaterThan(0); // every one of these cases writes a line
          expectNoSecretIn(text, delivery, signingSecret);
          expect(text).not.toContain(secret);
        },
      ),
      { numRuns: 200 },
    );
  });
});
