import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod/mini';
import {
  churnRiskAlertSchema,
  createReceiver,
  extraFields,
  type ChurnRiskAlert,
} from '@churn-risk/core';

describe('the exact alert type: the documented fields and no others', () => {
  const receiver = createReceiver({ secret: 'whsec_types' });

  it('has exactly the documented fields: a misspelt one is a type error', () => {
    receiver.on('churn_risk_alert', (alert) => {
      expectTypeOf(alert.score).toBeNumber();
      // @ts-expect-error: `scor` is not a field of ChurnRiskAlert
      expectTypeOf(alert.scor).toBeUnknown();
      // @ts-expect-error: nor is a field the service may add later
      expectTypeOf(alert.plan).toBeUnknown();
      expectTypeOf<keyof ChurnRiskAlert>().toEqualTypeOf<
        'event' | 'userId' | 'score' | 'tier' | 'signals' | 'recommendation' | 'triggeredAt'
      >();
    });
  });

  it('reaches unknown fields through extraFields(alert), typed unknown', () => {
    receiver.on('churn_risk_alert', (alert) => {
      const extra = extraFields(alert);
      expectTypeOf(extra).toEqualTypeOf<Record<string, unknown>>();
      expectTypeOf(extra.plan).toBeUnknown();
      // @ts-expect-error: unknown until checked
      extra.plan.toUpperCase();
      if (typeof extra.plan === 'string') expectTypeOf(extra.plan).toBeString();
    });
  });

  it('agrees with the schema field by field, and still fits a Record<string, unknown>', () => {
    type Parsed = z.output<typeof churnRiskAlertSchema>;
    expectTypeOf<Pick<Parsed, keyof ChurnRiskAlert>>().toEqualTypeOf<ChurnRiskAlert>();
    expectTypeOf<Parsed>().toExtend<ChurnRiskAlert>();
    expectTypeOf<ChurnRiskAlert>().toExtend<Readonly<Record<string, unknown>>>();
  });
});
