import { describe, expect, it } from 'vitest';
import {
  DeliveryRejectedError,
  isDeliveryRejectedError,
} from '../errors/delivery-rejected-error.js';
import { isWebhookVerificationError } from '../errors/webhook-verification-error.js';
import { churnRiskAlertSchema } from './alert-schema.js';
import { alertIdentity, parseEvent } from './parse-event.js';

const ALERT = {
  event: 'churn_risk_alert',
  userId: 'user_1',
  score: 0.82,
  tier: 'high',
  signals: ['activity_drop'],
  recommendation: 'Call them.',
  triggeredAt: '2026-01-15T12:00:00.000Z',
};

const bytes = (value: unknown): Uint8Array =>
  new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

function invalidPayload(body: Uint8Array): string {
  try {
    parseEvent(body);
  } catch (error) {
    if (isDeliveryRejectedError(error)) {
      expect(error).toBeInstanceOf(DeliveryRejectedError);
      expect(isWebhookVerificationError(error)).toBe(false); // a 400 is not a verification error
      expect(error).toMatchObject({ code: 'INVALID_PAYLOAD', status: 400 });
      return error.message;
    }
    throw error;
  }
  throw new Error('expected INVALID_PAYLOAD');
}

describe('parseEvent', () => {
  it('parses a valid alert and keeps unknown extra fields', () => {
    const parsed = parseEvent(bytes({ ...ALERT, accountTier: 'enterprise' }));
    expect(parsed).toEqual({
      kind: 'known',
      name: 'churn_risk_alert',
      payload: { ...ALERT, accountTier: 'enterprise' },
    });
  });

  it('accepts the score bounds 0 and 1, every tier and an empty signal list', () => {
    for (const patch of [
      { score: 0 },
      { score: 1 },
      { tier: 'low' },
      { tier: 'medium' },
      { signals: [] },
    ]) {
      expect(parseEvent(bytes({ ...ALERT, ...patch })).kind).toBe('known');
    }
  });

  it('ignores a JSON object whose event it has no schema for', () => {
    expect(parseEvent(bytes({ event: 'score_recomputed', anything: 1 }))).toEqual({
      kind: 'ignored',
      name: 'score_recomputed',
    });
    // Inherited property names are not events either.
    expect(parseEvent(bytes({ event: 'toString' }))).toEqual({ kind: 'ignored', name: 'toString' });
  });

  it.each([
    ['not JSON', 'not json {'],
    ['empty', ''],
    ['a JSON array', '[1,2]'],
    ['JSON null', 'null'],
    ['a JSON string', '"churn_risk_alert"'],
    ['an object without event', '{"userId":"u"}'],
    ['an object with an empty event', '{"event":""}'],
    ['an object with a numeric event', '{"event":5}'],
  ])('refuses %s', (_name, text) => {
    invalidPayload(bytes(text));
  });

  it('refuses bytes that are not UTF-8', () => {
    const body = bytes(ALERT);
    const broken = new Uint8Array([...body.subarray(0, 20), 0xff, 0xfe, ...body.subarray(20)]);
    expect(invalidPayload(broken)).toMatch(/UTF-8/);
  });

  it.each([
    ['a score above 1', { score: 1.5 }, 'score'],
    ['a negative score', { score: -0.1 }, 'score'],
    ['an unknown tier', { tier: 'critical' }, 'tier'],
    ['an empty userId', { userId: '' }, 'userId'],
    ['a missing recommendation', { recommendation: undefined }, 'recommendation'],
    ['non-string signals', { signals: [1] }, 'signals'],
    ['a date without time zone', { triggeredAt: '2026-01-15T12:00:00' }, 'triggeredAt'],
    ['a date with an offset', { triggeredAt: '2026-01-15T12:00:00+02:00' }, 'triggeredAt'],
    ['a non-date', { triggeredAt: 'yesterday' }, 'triggeredAt'],
  ])('refuses an alert with %s, naming the field', (_name, patch, field) => {
    expect(invalidPayload(bytes({ ...ALERT, ...patch }))).toContain(field);
  });
});

describe('alert schema and identity', () => {
  it('gives a retried delivery (same payload) the same identity', () => {
    const alert = churnRiskAlertSchema.parse(ALERT);
    expect(alertIdentity(alert)).toBe('user_1:2026-01-15T12:00:00.000Z');
    expect(alertIdentity(churnRiskAlertSchema.parse(JSON.parse(JSON.stringify(ALERT))))).toBe(
      alertIdentity(alert),
    );
    expect(alertIdentity({ ...alert, triggeredAt: '2026-01-15T12:00:01.000Z' })).not.toBe(
      alertIdentity(alert),
    );
  });
});
