import { createHmac } from 'node:crypto';

/** The secret every benchmark signs and verifies with (its UTF-8 bytes are the HMAC key). */
export const SECRET = 'whsec_bench_4f0c2b7e9a1d4c3b8e6f5a2d1c0b9e8f';
export const WEBHOOK_PATH = '/webhooks/churn-risk';

let counter = 0;

/**
 * A `churn_risk_alert` body, fresh each call: a new `userId` and `triggeredAt`, so that the
 * receiver's duplicate check never short-circuits. About 250 bytes; with `size`, padded to exactly
 * `size` bytes with an extra field (extra fields are kept).
 */
export function alertBody(size?: number): string {
  counter += 1;
  const alert = {
    event: 'churn_risk_alert',
    userId: `user_${process.pid}_${counter.toString().padStart(8, '0')}`,
    score: 0.83,
    tier: 'high',
    signals: ['activity_drop', 'payment_failed'],
    recommendation: 'Reach out with a retention offer before the next renewal date.',
    triggeredAt: new Date(Date.UTC(2025, 0, 1) + counter).toISOString(),
  };
  const text = JSON.stringify(alert);
  if (size === undefined) return text;
  const overhead = text.length + ',"notes":""'.length;
  if (size < overhead) throw new Error(`an alert body needs at least ${overhead} bytes`);
  return `${text.slice(0, -1)},"notes":"${'n'.repeat(size - overhead)}"}`;
}

/** The two signature headers, signed with node:crypto (independently of the core). */
export function signHeaders(
  body: string | Uint8Array,
  secret: string = SECRET,
  seconds: number = Math.floor(Date.now() / 1000),
): { 'x-service-signature': string; 'x-service-timestamp': string } {
  const timestamp = String(seconds);
  const hex = createHmac('sha256', secret).update(timestamp).update('.').update(body).digest('hex');
  return { 'x-service-signature': `sha256=${hex}`, 'x-service-timestamp': timestamp };
}

/**
 * GitHub's signature header for `@octokit/webhooks`' middleware: `x-hub-signature-256` is
 * `sha256=<hex>` of the HMAC over the body alone (no timestamp), plus the event name and delivery
 * id headers the middleware requires.
 */
export function signGithubHeaders(
  body: string | Uint8Array,
  secret: string = SECRET,
): Record<string, string> {
  const hex = createHmac('sha256', secret).update(body).digest('hex');
  counter += 1;
  return {
    'x-github-event': 'ping',
    'x-github-delivery': `delivery-${process.pid}-${counter}`,
    'x-hub-signature-256': `sha256=${hex}`,
  };
}
