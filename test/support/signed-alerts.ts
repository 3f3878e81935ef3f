/** Makes alert bodies for an adapter's tests; each call takes the next `sequence` number. */
export type AlertBodies = (space?: number, extra?: Record<string, unknown>) => string;

/**
 * A factory of `churn_risk_alert` bodies, each with a fresh identity (`<prefix>_user_<n>` and its
 * own `triggeredAt`), so that no delivery is taken for a duplicate. `space` indents the JSON (a
 * re-serialised body would then fail the signature); `extra` adds or replaces fields.
 */
export function alertBodies(prefix: string): AlertBodies {
  let sequence = 0;
  return (space, extra = {}) => {
    sequence += 1;
    const alert = {
      event: 'churn_risk_alert',
      userId: `${prefix}_user_${sequence}`,
      score: 0.9,
      tier: 'high',
      signals: ['activity_drop'],
      recommendation: 'Call them.',
      triggeredAt: new Date(Date.UTC(2026, 0, 1) + sequence * 1000).toISOString(),
      ...extra,
    };
    return JSON.stringify(alert, null, space);
  };
}

/** The delivery headers for `body` signed with `secret` now, and its content type. */
export function signedHeaders(
  body: string,
  secret: string,
  contentType = 'application/json',
): Record<string, string> {
  const { signature, timestamp } = signPayload({ body, secret });
  return {
    'content-type': contentType,
    'x-service-signature': signature,
    'x-service-timestamp': timestamp,
  };
}
import { signPayload } from '@churn-risk/core/testing';
