import { createTestDelivery } from '@churn-risk/core/testing';

/** The secret of every receiver in these tests. */
export const SECRET = 'whsec_redis_tests_5b1d';

let sequence = 0;

/** A valid alert with a fresh identity. */
export function makeAlert(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    event: 'churn_risk_alert',
    userId: `user_${process.pid}_${sequence}`,
    score: 0.81,
    tier: 'high',
    signals: ['activity_drop'],
    recommendation: 'Call them.',
    triggeredAt: new Date(Date.UTC(2026, 10, 1) + sequence * 1000).toISOString(),
    ...overrides,
  };
}

/** A signed delivery of `alert`, as `receiver.handle` takes it. */
export function deliveryOf(alert: Record<string, unknown>): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery(alert, { secret: SECRET });
  return { method: 'POST', headers, body };
}
