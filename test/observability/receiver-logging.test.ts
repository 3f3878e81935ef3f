import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type Logger, type RejectedDelivery } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import express from 'express';
import { createTestDelivery } from '@churn-risk/core/testing';

const SECRET = 'whsec_logging_test_secret_0123456789';

/** A real pino instance writing JSON lines into an array. */
function pinoLines(level = 'debug'): {
  logger: Logger;
  lines: Record<string, unknown>[];
  raw: string[];
} {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      raw.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = pino({ level }, stream);
  return {
    logger,
    raw,
    get lines() {
      return raw
        .flatMap((text) => text.split('\n').filter(Boolean))
        .map((line) => JSON.parse(line));
    },
  };
}

/** pino writes through a stream: let it flush. */
const flushed = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function forged(): { method: string; headers: Record<string, string>; body: string } {
  const delivery = createTestDelivery({ userId: 'user_forged' }, { secret: 'not-the-secret' });
  return { method: 'POST', headers: delivery.headers, body: delivery.body };
}

describe('receiver logging with pino', () => {
  it('logs a forged delivery at warn with status 401 and code INVALID_SIGNATURE', async () => {
    const log = pinoLines();
    const receiver = createReceiver({ secret: SECRET, logger: log.logger });
    const result = await receiver.handle(forged());
    await flushed();
    expect(result.status).toBe(401);
    const refused = log.lines.filter((line) => line.code === 'INVALID_SIGNATURE');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 40, status: 401, code: 'INVALID_SIGNATURE' });
    expect(String(refused[0]?.msg)).toMatch(/refused/);
  });

  it('logs an accepted alert at debug with its identity, a failed handler at error', async () => {
    const log = pinoLines();
    const receiver = createReceiver({
      secret: SECRET,
      logger: log.logger,
      mode: 'sync',
      retries: 0,
    });
    receiver.on('churn_risk_alert', () => {
      throw new Error('handler broke');
    });
    const delivery = createTestDelivery({ userId: 'user_ok' }, { secret: SECRET });
    const result = await receiver.handle({ method: 'POST', ...delivery });
    await flushed();
    expect(result.status).toBe(500);
    const id = `user_ok:${delivery.alert.triggeredAt}`;
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 20, id }));
    const failure = log.lines.find((line) => line.level === 50);
    expect(failure).toMatchObject({ id, tries: 1, err: { message: 'handler broke' } });
    // the 500 HANDLER_FAILED answer is itself a refused delivery
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: 40, status: 500, code: 'HANDLER_FAILED' }),
    );
  });

  it('logs nothing by default for accepted alerts and duplicates (refusals: default-logging.test.ts)', async () => {
    const spies = (['debug', 'info', 'warn', 'error', 'log'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => undefined),
    );
    try {
      const receiver = createReceiver({ secret: SECRET });
      receiver.on('churn_risk_alert', () => undefined);
      await receiver.handle({ method: 'GET', headers: {}, body: null }); // a 405: not logged either
      const delivery = createTestDelivery(undefined, { secret: SECRET });
      await (
        await receiver.handle({ method: 'POST', ...delivery })
      ).done;
      await (
        await receiver.handle({ method: 'POST', ...delivery })
      ).done;
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});

describe('onRejected', () => {
  it('gets status, code, message and receivedAt of each refused delivery', async () => {
    const seen: RejectedDelivery[] = [];
    const receiver = createReceiver({ secret: SECRET, now: () => 1_700_000_000_000 });
    receiver.onRejected((rejection) => void seen.push(rejection));
    await receiver.handle(forged());
    await receiver.handle({ method: 'GET', headers: {}, body: null });
    expect(seen).toEqual([
      {
        status: 401,
        code: 'INVALID_SIGNATURE',
        message: expect.any(String) as string,
        receivedAt: new Date(1_700_000_000_000),
      },
      expect.objectContaining({ status: 405, code: 'METHOD_NOT_ALLOWED' }),
    ]);
  });

  it('listeners that throw or reject do not change the answer, and later listeners still run', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const log = pinoLines();
    try {
      const reference = await createReceiver({ secret: SECRET }).handle(forged());
      const receiver = createReceiver({ secret: SECRET, logger: log.logger });
      const last = vi.fn();
      receiver
        .onRejected(() => {
          throw new Error('listener broke');
        })
        .onRejected(() => Promise.reject(new Error('async listener broke')))
        .onRejected(last);
      const answer = await receiver.handle(forged());
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(answer.status).toBe(reference.status);
      expect(answer.body).toBe(reference.body);
      expect(answer.headers).toEqual(reference.headers);
      expect(last).toHaveBeenCalledOnce();
      // accepted deliveries are unaffected too
      receiver.on('churn_risk_alert', () => undefined);
      const good = createTestDelivery(undefined, { secret: SECRET });
      expect((await receiver.handle({ method: 'POST', ...good })).status).toBe(202);
      await flushed();
      const errors = log.lines.filter((line) => line.level === 50).map((line) => line.err);
      expect(errors).toEqual([
        expect.objectContaining({ message: 'listener broke' }),
        expect.objectContaining({ message: 'async listener broke' }),
      ]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

/** Serves `listener` on a free port, sends `body` with POST, closes; the status. */
async function postTo(listener: RequestListener, body: string): Promise<number> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body });
    return response.status;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('refusals made while reading the body', () => {
  it.each([
    [
      'receiver.node',
      (receiver: ReturnType<typeof createReceiver>): RequestListener => receiver.node,
    ],
    [
      'the Express middleware',
      (receiver: ReturnType<typeof createReceiver>): RequestListener =>
        express().post('/', createMiddleware(receiver)),
    ],
  ])('a body over maxBodyBytes read by %s is logged and reported', async (_name, serve) => {
    const log = pinoLines();
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 64, logger: log.logger });
    const seen: RejectedDelivery[] = [];
    receiver.onRejected((rejection) => void seen.push(rejection));
    expect(await postTo(serve(receiver), 'x'.repeat(1000))).toBe(413);
    await flushed();
    expect(seen).toEqual([expect.objectContaining({ status: 413, code: 'PAYLOAD_TOO_LARGE' })]);
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: 40, status: 413, code: 'PAYLOAD_TOO_LARGE' }),
    );
  });
});

/** What a secret is made of: letters, digits and `_`. */
const SECRET_ALPHABET = Array.from('abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789_');

/** Everything a delivery can be: genuine, forged, tampered, stale, malformed, not an alert. */
const deliveryCase = fc.record({
  secret: fc.string({
    minLength: 16,
    maxLength: 40,
    unit: fc.constantFrom(...SECRET_ALPHABET),
  }),
  userId: fc.stringMatching(/^u_[a-z0-9]{1,10}$/),
  kind: fc.constantFrom(
    'genuine',
    'forged',
    'tampered',
    'stale',
    'wrong-secret',
    'not-an-alert',
    'malformed-header',
    'handler-fails',
  ),
  forgedHex: fc.stringMatching(/^[0-9a-f]{64}$/),
  skewSeconds: fc.integer({ min: 301, max: 100_000 }),
});

describe('nothing logged holds a secret, a signature or the body', () => {
  it('for any refused or accepted delivery (1,000 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(deliveryCase, async ({ secret, userId, kind, forgedHex, skewSeconds }) => {
        const log = pinoLines();
        const rejections: string[] = [];
        const receiver = createReceiver({ secret, logger: log.logger, mode: 'sync', retries: 0 });
        receiver.onRejected((rejection) => void rejections.push(JSON.stringify(rejection)));
        receiver.on('churn_risk_alert', () => {
          if (kind === 'handler-fails') throw new Error('handler failed');
        });
        const now = Math.floor(Date.now() / 1000);
        const timestamp = kind === 'stale' ? now - skewSeconds : now;
        const delivery = createTestDelivery(
          { userId },
          { secret: kind === 'wrong-secret' ? `${secret}x` : secret, timestamp },
        );
        let body = delivery.body;
        if (kind === 'tampered') body = body.replace('"score":0.82', '"score":0.12');
        if (kind === 'not-an-alert') body = JSON.stringify({ event: 'churn_risk_alert', userId });
        const headers = { ...delivery.headers };
        if (kind === 'forged') headers['x-service-signature'] = `sha256=${forgedHex}`;
        if (kind === 'malformed-header') headers['x-service-signature'] = `sha256=${forgedHex}zz`;
        const expected = createHmac('sha256', secret)
          .update(`${headers['x-service-timestamp']}.${body}`)
          .digest('hex');
        const sentHex = headers['x-service-signature']!.slice('sha256='.length);
        await receiver.handle({ method: 'POST', headers, body });
        await flushed();
        const text = [...log.raw, ...rejections].join('\n');
        expect(text.length).toBeGreaterThan(0); // every case logs at least one line
        for (const forbidden of [secret, expected, sentHex, sentHex.toUpperCase(), body]) {
          expect(text).not.toContain(forbidden);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
