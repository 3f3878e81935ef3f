import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { createTestAlert } from '../testing/test-delivery.js';
import { churnRiskAlertSchema, riskTierSchema, UTC_DATE_TIME } from './alert-schema.js';
import { issueMessages } from './issue-messages.js';
import { parseEvent } from './parse-event.js';

/**
 * The alert schema as zod's own checks write it (`z.minLength`, `z.gte`, `z.lte`,
 * `z.iso.datetime()`): the oracle of the schema's hand-written checks.
 */
const reference = z.looseObject({
  event: z.literal('churn_risk_alert'),
  userId: z.string().check(z.minLength(1)),
  score: z.number().check(z.gte(0), z.lte(1)),
  tier: riskTierSchema,
  signals: z.array(z.string()),
  recommendation: z.string(),
  triggeredAt: z.iso.datetime(),
});

/** An issue as messages and callers see it (zod's own also carries the check instance). */
const shown = (issues: readonly object[] | undefined) =>
  issues?.map((issue) => {
    const { inst: _inst, pattern: _pattern, ...rest } = issue as Record<string, unknown>;
    return rest;
  });

interface Issue {
  code: string;
  path: PropertyKey[];
}

/**
 * zod's issues less those its length check adds after a field's type was already refused (it
 * also measures a non-string with a `length`: `userId: []` gets "expected array to have >=1
 * items" besides "expected string"). Core's checks run only on a value of the field's type.
 */
const withoutAfterWrongType = <T extends Issue>(issues: readonly T[] | undefined) =>
  issues?.filter(
    (issue, i) =>
      !issues
        .slice(0, i)
        .some(
          (before) =>
            before.code === 'invalid_type' && before.path.join('.') === issue.path.join('.'),
        ),
  );

describe("the alert schema's checks against zod's own", () => {
  it('decide and raise every issue as the schema written with zod checks does', () => {
    const english = en().localeError;
    const near = fc.oneof(
      fc.double({ min: -0.5, max: 1.5, noNaN: true }),
      fc.constantFrom(
        0,
        1,
        -0,
        -1e-12,
        1 + 1e-12,
        '',
        'u',
        '2026-01-15T12:00:00Z',
        '2026-02-30T00:00:00Z',
      ),
      fc.jsonValue({ maxDepth: 1 }),
    );
    fc.assert(
      fc.property(
        // `event` too: the schema's one-value enum against zod's `z.literal`.
        fc.record(
          {
            event: fc.oneof(near, fc.constantFrom('churn_risk_alert', 'churn_risk_alerts')),
            userId: near,
            score: near,
            triggeredAt: near,
          },
          { requiredKeys: [] },
        ),
        (fields) => {
          const json = { ...createTestAlert(), ...fields };
          const ours = churnRiskAlertSchema.safeParse(json, { error: english });
          const zods = reference.safeParse(json, { error: english });
          expect(ours.success).toBe(zods.success);
          expect(shown(ours.error?.issues)).toEqual(
            shown(withoutAfterWrongType(zods.error?.issues)),
          );
          // And core's own English wording (no locale loaded) says the same.
          const worded = churnRiskAlertSchema.safeParse(json, { error: issueMessages });
          expect(worded.error?.issues.map((issue) => issue.message)).toEqual(
            ours.error?.issues.map((issue) => issue.message),
          );
        },
      ),
      { numRuns: 5_000 },
    );
  });
});

/**
 * The oracle: zod's own ISO date-time check, which the schema used before `UTC_DATE_TIME` (zod
 * >= 4.2, the workspace's: seconds required, as RFC 3339 says).
 */
const zodDateTime = z.iso.datetime();

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Strings shaped like date-times, each part near or past its bounds. */
const dateTimeLike = fc
  .record({
    year: fc.oneof(
      fc.integer({ min: 0, max: 9999 }),
      fc.constantFrom(0, 4, 100, 400, 1900, 2000, 2024, 2100, 2400),
    ),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.option(fc.integer({ min: 0, max: 61 })),
    fraction: fc.option(fc.stringMatching(/^[0-9]{0,4}$/)),
    zone: fc.constantFrom('Z', 'Z', 'z', '', '+00:00', '-01:30', 'ZZ'),
    sep: fc.constantFrom('T', 'T', 'T', ' ', 't'),
  })
  .map(
    ({ year, month, day, hour, minute, second, fraction, zone, sep }) =>
      `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}${sep}${pad(hour, 2)}:${pad(minute, 2)}` +
      (second === null ? '' : `:${pad(second, 2)}${fraction === null ? '' : `.${fraction}`}`) +
      zone,
  );

const accepts = (value: string): boolean => UTC_DATE_TIME.test(value);

describe("UTC_DATE_TIME, the alert schema's date-time check", () => {
  it('agrees with z.iso.datetime() on date-time-shaped strings and on any string', () => {
    fc.assert(
      fc.property(fc.oneof(dateTimeLike, dateTimeLike, fc.string()), (value) => {
        expect(accepts(value)).toBe(zodDateTime.safeParse(value).success);
      }),
      { numRuns: 30_000 },
    );
  });

  it('agrees on every day of every month of leap and common years', () => {
    for (const year of [1900, 2000, 2023, 2024, 2100, 2400]) {
      for (let month = 1; month <= 12; month++) {
        for (let day = 28; day <= 32; day++) {
          const value = `${year}-${pad(month, 2)}-${pad(day, 2)}T00:00:00Z`;
          expect(accepts(value), value).toBe(zodDateTime.safeParse(value).success);
          const real = new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
          expect(accepts(value), value).toBe(real);
        }
      }
    }
  });

  it('takes what toISOString gives, and refuses a time without seconds or with an offset', () => {
    expect(accepts(new Date().toISOString())).toBe(true);
    expect(accepts('2026-12-31T23:59:59.123456Z')).toBe(true);
    expect(accepts('2026-01-15T12:00Z')).toBe(false); // RFC 3339 requires the seconds
    expect(accepts('2026-01-15T12:00:00+00:00')).toBe(false);
    expect(accepts('２０２６-01-15T12:00:00Z')).toBe(false); // digits outside ASCII
  });

  it('refuses a bad date-time with the issue and message z.iso.datetime() gives', () => {
    const result = churnRiskAlertSchema.shape.triggeredAt.safeParse('2023-02-29T00:00:00Z');
    expect(result.error?.issues).toMatchObject([
      { code: 'invalid_format', format: 'datetime', path: [] },
    ]);
    const body = JSON.stringify({
      event: 'churn_risk_alert',
      userId: 'u1',
      score: 0.5,
      tier: 'medium',
      signals: [],
      recommendation: 'r',
      triggeredAt: '2023-02-29T00:00:00Z',
    });
    expect(() => parseEvent(new TextEncoder().encode(body))).toThrow(
      'The churn_risk_alert payload is invalid: triggeredAt: Invalid ISO datetime',
    );
  });
});
