import { createHmac, timingSafeEqual } from 'node:crypto';
import { SECRET } from './alert.js';
import type { Delivery } from './delivery.js';

/** The fields of a parsed alert a hand-written route reads. */
export interface HandAlert {
  event?: unknown;
  userId?: unknown;
  triggeredAt?: unknown;
}

/**
 * The hand-written check the adapters are compared with: the HMAC-SHA256 over `timestamp.body`,
 * `timingSafeEqual`, the 300 s tolerance and `JSON.parse` (no schema, no dedupe, no queue).
 * Returns the parsed alert, which a route that queues it needs (parsing twice would handicap it);
 * `undefined` for a delivery to refuse. Throws on a body that is not JSON.
 */
export function handVerifiedAlert(
  body: unknown,
  signature: string | undefined,
  timestamp: string | undefined,
): HandAlert | undefined {
  if (!Buffer.isBuffer(body) || signature === undefined || timestamp === undefined) return;
  if (!/^\d{1,12}$/.test(timestamp) || !signature.startsWith('sha256=')) return;
  const given = Buffer.from(signature.slice(7), 'hex');
  const mac = createHmac('sha256', SECRET).update(timestamp).update('.').update(body).digest();
  if (given.length !== mac.length || !timingSafeEqual(given, mac)) return;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return;
  const alert = JSON.parse(body.toString('utf8')) as HandAlert;
  return alert.event === 'churn_risk_alert' ? alert : undefined;
}

/** `handVerifiedAlert` as a yes or no (the routes that only answer). */
export function handVerified(
  body: unknown,
  signature: string | undefined,
  timestamp: string | undefined,
): boolean {
  return handVerifiedAlert(body, signature, timestamp) !== undefined;
}

/** `handVerified` on a genuine delivery, which it must accept (the in-process benchmarks). */
export function handCheck({ body, headers }: Delivery): void {
  const ok = handVerified(body, headers['x-service-signature'], headers['x-service-timestamp']);
  if (!ok) throw new Error('the hand-written check refused a genuine delivery');
}
