import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signPayload } from '../signature/sign.js';
import { createReceiver } from '../create-receiver/create-receiver.js';

const SECRET = 'whsec_property_0d4e';
const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW_S = NOW_MS / 1000;
const KNOWN = new Set([
  'event',
  'userId',
  'score',
  'tier',
  'signals',
  'recommendation',
  'triggeredAt',
]);

/** Any valid `churn_risk_alert`, with unknown extra fields. */
const alertArbitrary = fc
  .record({
    userId: fc.string({ minLength: 1, maxLength: 40 }),
    score: fc.double({ min: 0, max: 1, noNaN: true }),
    tier: fc.constantFrom('low', 'medium', 'high'),
    signals: fc.array(fc.string({ maxLength: 20 }), { maxLength: 5 }),
    recommendation: fc.string({ maxLength: 80 }),
    triggeredAt: fc
      .date({
        min: new Date('2000-01-01T00:00:00Z'),
        max: new Date('2100-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((date) => date.toISOString()),
    extra: fc.dictionary(
      fc
        .string({ minLength: 1, maxLength: 10 })
        .filter((key) => !KNOWN.has(key) && key !== '__proto__'),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 3 },
    ),
  })
  .map(({ extra, ...fields }) => ({ ...extra, event: 'churn_risk_alert', ...fields }));

function signedDelivery(
  alert: unknown,
  timestamp = NOW_S,
): { body: Uint8Array; signature: string; timestamp: string } {
  const body = new TextEncoder().encode(JSON.stringify(alert));
  return { body, ...signPayload({ body, secret: SECRET, timestamp }) };
}

function receiverWithLog(): { receiver: ReturnType<typeof createReceiver>; seen: unknown[] } {
  const receiver = createReceiver({ secret: SECRET, now: () => NOW_MS, retries: 0 });
  const seen: unknown[] = [];
  receiver.on('churn_risk_alert', (alert) => {
    seen.push(alert);
  });
  return { receiver, seen };
}

const post = (body: Uint8Array, signature: string, timestamp: string) => ({
  method: 'POST',
  headers: { 'x-service-signature': signature, 'x-service-timestamp': timestamp },
  body,
});

const HEX = '0123456789abcdef';

/** One change to a signed delivery: a body byte, a signature digit, or the timestamp. */
const tamperArbitrary = fc.oneof(
  fc.record({
    part: fc.constant('body' as const),
    at: fc.nat(),
    delta: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({
    part: fc.constant('signature' as const),
    at: fc.nat(),
    delta: fc.integer({ min: 1, max: 15 }),
  }),
  fc.record({
    part: fc.constant('timestamp' as const),
    at: fc.nat(),
    delta: fc.integer({ min: -300, max: 300 }).filter((d) => d !== 0),
  }),
);

describe('receiver properties', () => {
  it('rejects any change to the body, signature or timestamp of a signed delivery', async () => {
    await fc.assert(
      fc.asyncProperty(alertArbitrary, tamperArbitrary, async (alert, change) => {
        const { receiver, seen } = receiverWithLog();
        const delivery = signedDelivery(alert);
        let { body, signature, timestamp } = delivery;
        if (change.part === 'body') {
          body = Uint8Array.from(body);
          const index = change.at % body.length;
          body[index] = (body[index]! + change.delta) % 256;
        } else if (change.part === 'signature') {
          const index = 'sha256='.length + (change.at % 64);
          const digit = HEX[(HEX.indexOf(signature[index]!) + change.delta) % 16]!;
          signature = signature.slice(0, index) + digit + signature.slice(index + 1);
        } else {
          timestamp = String(NOW_S + change.delta); // still within tolerance: only the signature can fail
        }
        const result = await receiver.handle(post(body, signature, timestamp));
        expect(result.status).toBe(401);
        expect(JSON.parse(result.body).error.code).toBe('INVALID_SIGNATURE');
        await receiver.drain();
        expect(seen).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('accepts any valid alert signed correctly and delivers it to handlers exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(alertArbitrary, fc.integer({ min: 1, max: 3 }), async (alert, times) => {
        const { receiver, seen } = receiverWithLog();
        const statuses: number[] = [];
        for (let i = 0; i < times; i++) {
          // Each redelivery is signed afresh with its own time, as the service does.
          const { body, signature, timestamp } = signedDelivery(alert, NOW_S - i * 60);
          statuses.push((await receiver.handle(post(body, signature, timestamp))).status);
        }
        await receiver.drain();
        expect(statuses).toEqual(Array.from({ length: times }, () => 202));
        expect(seen).toEqual([JSON.parse(JSON.stringify(alert))]);
      }),
      { numRuns: 200 },
    );
  });
});
