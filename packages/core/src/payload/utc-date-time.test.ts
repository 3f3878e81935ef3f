import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { churnRiskAlertSchema, UTC_DATE_TIME } from './alert-schema.js';
import { parseEvent } from './parse-event.js';

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
