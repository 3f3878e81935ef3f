import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { config, type $ZodConfig } from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';
import { createTestAlert } from '../testing.js';
import { churnRiskAlertSchema } from './alert-schema.js';
import { issueMessages } from './issue-messages.js';
import { parseEvent } from './parse-event.js';

const valid = createTestAlert();

/** Any JSON value, near misses of each field included by `fc.oneof` below. */
const anyJson = fc.jsonValue({ maxDepth: 1 });

/** A body as JSON bytes. */
const bytes = (value: object): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

/** The message of parseEvent's refusal of `body`. */
function refusal(body: object): string {
  try {
    parseEvent(bytes(body));
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected INVALID_PAYLOAD');
}

describe('messages of invalid payloads with zod/mini', () => {
  // zod (classic) configures its English locale globally when it loads, and other test files of
  // this worker may have loaded it: each test starts from zod/mini's own state, no locale at all.
  let saved: $ZodConfig;
  beforeEach(() => {
    saved = { ...config() };
    config({ localeError: undefined, customError: undefined });
  });
  afterEach(() => {
    config({ localeError: saved.localeError, customError: saved.customError });
  });

  it('are zod English messages, with each path, though no locale is loaded', () => {
    expect(config().localeError).toBeUndefined();
    expect(refusal({ ...valid, score: 2 })).toBe(
      'The churn_risk_alert payload is invalid: score: Too big: expected number to be <=1',
    );
    expect(refusal({ ...valid, userId: '', signals: ['a', 3] })).toBe(
      'The churn_risk_alert payload is invalid: userId: Too small: expected string to have >=1 characters; signals.1: Invalid input: expected string, received number',
    );
    expect(refusal({ ...valid, tier: 'critical', triggeredAt: 'yesterday' })).toBe(
      'The churn_risk_alert payload is invalid: tier: Invalid option: expected one of "low"|"medium"|"high"; triggeredAt: Invalid ISO datetime',
    );
    expect(refusal({ event: 'churn_risk_alert' })).toMatch(
      /^The churn_risk_alert payload is invalid: userId: Invalid input: expected string, received undefined; score: /,
    );
  });

  it('word every issue of any invalid alert as zod`s English locale does', () => {
    const english = en().localeError;
    const field = fc.oneof(anyJson, fc.double({ min: -0.5, max: 1.5, noNaN: true }));
    fc.assert(
      fc.property(
        fc.record(
          {
            event: fc.oneof(fc.constant('churn_risk_alert'), anyJson),
            userId: field,
            score: field,
            tier: fc.oneof(fc.constantFrom('low', 'High'), anyJson),
            signals: field,
            recommendation: field,
            triggeredAt: fc.oneof(fc.constantFrom('2026-01-15T12:00:00Z', '2026-01-15'), anyJson),
          },
          { requiredKeys: [] },
        ),
        (json) => {
          const ours = churnRiskAlertSchema.safeParse(json, { error: issueMessages });
          const zods = churnRiskAlertSchema.safeParse(json, { error: english });
          expect(ours.error?.issues).toEqual(zods.error?.issues);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("leave the app's own zod configuration in charge", () => {
    config({ customError: (issue) => `custom ${issue.code}` });
    expect(refusal({ ...valid, score: 2 })).toBe(
      'The churn_risk_alert payload is invalid: score: custom too_big',
    );
    config({ customError: undefined, localeError: () => 'localised' });
    expect(refusal({ ...valid, score: 2 })).toBe(
      'The churn_risk_alert payload is invalid: score: localised',
    );
  });
});
