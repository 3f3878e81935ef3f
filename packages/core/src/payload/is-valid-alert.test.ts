import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { churnRiskAlertSchema } from './alert-schema.js';
import { isValidAlert } from './parse-event.js';
import { parseEvent } from './parse-event.js';

const valid = {
  event: 'churn_risk_alert',
  userId: 'user_42',
  score: 0.82,
  tier: 'high',
  signals: ['login_drop'],
  recommendation: 'Reach out',
  triggeredAt: '2026-01-15T12:00:00.000Z',
};

/** Values a field may take: valid ones, near misses and other JSON types. */
const anyJson = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string(),
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 }),
);
const field = {
  userId: fc.oneof(fc.string({ maxLength: 4 }), anyJson),
  score: fc.oneof(
    fc.double({ min: -0.5, max: 1.5, noNaN: true }),
    fc.constantFrom(0, 1, -0, 1.0000001, -1e-9),
    anyJson,
  ),
  tier: fc.oneof(fc.constantFrom('low', 'medium', 'high', 'High', 'critical', ''), anyJson),
  signals: fc.oneof(fc.array(fc.string(), { maxLength: 3 }), anyJson),
  recommendation: fc.oneof(fc.string(), anyJson),
  triggeredAt: fc.oneof(
    fc
      .date({ min: new Date(-62e12), max: new Date(253e12), noInvalidDate: true })
      .map((d) => d.toISOString()),
    fc.constantFrom(
      '2026-01-15T12:00:00Z',
      '2026-01-15T12:00:00.1Z',
      '2026-01-15T12:00Z',
      '2026-01-15T12:00:00+00:00',
      '2026-01-15 12:00:00Z',
      '2024-02-29T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-01-15T24:00:00Z',
      '2026-01-15T12:00:00.000z',
    ),
    anyJson,
  ),
};

describe('isValidAlert, the fast path of parseEvent', () => {
  it('never accepts what the zod schema refuses, and accepts the usual valid alert', () => {
    fc.assert(
      fc.property(
        fc.record(field, { requiredKeys: [] }),
        fc.dictionary(fc.string({ maxLength: 5 }), anyJson, { maxKeys: 2 }),
        (fields, extra) => {
          const json = { ...extra, ...fields, event: 'churn_risk_alert' };
          const zodSays = churnRiskAlertSchema.safeParse(json).success;
          const fastSays = isValidAlert(json);
          if (fastSays) expect(zodSays).toBe(true);
          // Where zod accepts a JSON-shaped alert, the fast path does too (no needless zod runs).
          if (zodSays) expect(fastSays).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
    expect(isValidAlert(valid)).toBe(true);
  });

  it('gives handlers the same payload zod would, extra fields kept', () => {
    const body = { ...valid, plan: 'pro', nested: { a: [1, 2] } };
    const parsed = parseEvent(new TextEncoder().encode(JSON.stringify(body)));
    expect(parsed).toEqual({
      kind: 'known',
      name: 'churn_risk_alert',
      payload: churnRiskAlertSchema.parse(body),
    });
  });

  it('leaves the refusal and its message to zod', () => {
    const body = JSON.stringify({ ...valid, score: 2 });
    expect(() => parseEvent(new TextEncoder().encode(body))).toThrow(/score/);
  });
});
