// Signed test deliveries for a user's own webhook tests: a realistic alert, signed as the
// churn-risk service signs it.
import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import type { Secret } from '../signature/secrets.js';
import { signPayload } from '../signature/sign.js';
import type { SignedContent } from '../signature/verify.js';

/**
 * A realistic `churn_risk_alert`, with `overrides` applied (not validated, so that tests can build
 * invalid alerts on purpose). `triggeredAt` defaults to the current time, so two default alerts
 * created in different milliseconds have different identities (`userId:triggeredAt`).
 *
 * @example
 * const alert = createTestAlert({ tier: 'medium', score: 0.55 });
 */
export function createTestAlert(overrides: Partial<ChurnRiskAlert> = {}): ChurnRiskAlert {
  return {
    event: 'churn_risk_alert',
    userId: 'user_8f3a2c',
    score: 0.82,
    tier: 'high',
    signals: ['activity_drop', 'payment_failed'],
    recommendation: 'Reach out about the failed payment and offer help with billing.',
    triggeredAt: new Date().toISOString(),
    ...overrides,
  };
}

/** Options of `createTestDelivery`. */
export interface TestDeliveryOptions {
  /** The secret your receiver is configured with (several: one signature each, as when rotating). */
  secret: Secret;
  /** Unix seconds or a `Date` of the timestamp header. Default: now. */
  timestamp?: number | Date;
  /** What the signature covers. Default `'timestamp.body'`. */
  signedContent?: SignedContent;
  /** Default `x-service-signature`. */
  signatureHeader?: string;
  /** Default `x-service-timestamp`. */
  timestampHeader?: string;
}

/** A signed delivery: send `body` exactly as is, with `headers`. */
export interface TestDelivery {
  /** `content-type`, the signature header and the timestamp header (lower-case names). */
  headers: Record<string, string>;
  /** The JSON body, the exact bytes that were signed. */
  body: string;
  /** The alert in the body. */
  alert: ChurnRiskAlert;
}

/**
 * A correctly signed webhook delivery of `alert` (a realistic default alert, with your overrides),
 * as the churn-risk service would send it.
 *
 * @example
 * const { headers, body } = createTestDelivery({ userId: 'user_42' }, { secret: 'whsec_test' });
 * const result = await receiver.handle({ method: 'POST', headers, body });
 * expect(result.status).toBe(202);
 */
export function createTestDelivery(
  alert: Partial<ChurnRiskAlert> | undefined,
  options: TestDeliveryOptions,
): TestDelivery {
  const payload = createTestAlert(alert);
  const body = JSON.stringify(payload);
  const signOptions: Parameters<typeof signPayload>[0] = { body, secret: options.secret };
  if (options.timestamp !== undefined) signOptions.timestamp = options.timestamp;
  if (options.signedContent !== undefined) signOptions.signedContent = options.signedContent;
  const { signature, timestamp } = signPayload(signOptions);
  return {
    headers: {
      'content-type': 'application/json',
      [(options.signatureHeader ?? 'x-service-signature').toLowerCase()]: signature,
      [(options.timestampHeader ?? 'x-service-timestamp').toLowerCase()]: timestamp,
    },
    body,
    alert: payload,
  };
}
