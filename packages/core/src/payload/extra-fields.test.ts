import {
  churnRiskAlertSchema,
  createReceiver,
  extraFields,
  type ChurnRiskAlert,
} from '@churn-risk/core';
import { createTestAlert, signPayload } from '@churn-risk/core/testing';
import { describe, expect, it } from 'vitest';

const SECRET = 'whsec_extra_fields';

/** A signed delivery of exactly `payload` (extra fields included), as the service sends it. */
function delivery(payload: object): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const body = JSON.stringify(payload);
  const { signature, timestamp } = signPayload({ body, secret: SECRET });
  return {
    method: 'POST',
    headers: { 'x-service-signature': signature, 'x-service-timestamp': timestamp },
    body,
  };
}

describe('unknown alert fields (the alert type is exact; extras stay at run time)', () => {
  it('stay in the object the handler gets, and extraFields(alert) returns exactly them', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const seen: ChurnRiskAlert[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      seen.push(alert);
    });
    const sent = { ...createTestAlert({ userId: 'user_extra' }), plan: 'pro', nested: { a: [1] } };
    const result = await receiver.handle(delivery(sent));
    expect(result.status).toBe(202);
    await result.done;
    expect(seen).toHaveLength(1);
    const [alert] = seen as [ChurnRiskAlert];
    expect(alert).toEqual(sent);
    expect(extraFields(alert)).toEqual({ plan: 'pro', nested: { a: [1] } });
    expect(alert.userId).toBe('user_extra');
  });

  it('are kept by the schema too, and an alert without any has no extra fields', () => {
    const plain = createTestAlert();
    expect(extraFields(plain)).toEqual({});
    const parsed = churnRiskAlertSchema.parse({ ...plain, region: 'eu' });
    expect(extraFields(parsed)).toEqual({ region: 'eu' });
  });

  it('are copied: changing what extraFields returned leaves the alert as it was', () => {
    const alert = { ...createTestAlert(), plan: 'pro' };
    const extra = extraFields(alert);
    extra.plan = 'free';
    expect(alert.plan).toBe('pro');
  });
});
