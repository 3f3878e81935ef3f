import { createHmac, timingSafeEqual } from 'node:crypto';
import { SECRET } from './alert.js';
import type { Delivery } from './delivery.js';

/**
 * The hand-written check the adapters are compared with: the SPEC's HMAC over `timestamp.body`,
 * `timingSafeEqual`, the 300 s tolerance and `JSON.parse` (no schema, no dedupe, no queue).
 */
export function handVerified(
  body: unknown,
  signature: string | undefined,
  timestamp: string | undefined,
): boolean {
  if (!Buffer.isBuffer(body) || signature === undefined || timestamp === undefined) return false;
  if (!/^\d{1,12}$/.test(timestamp) || !signature.startsWith('sha256=')) return false;
  const given = Buffer.from(signature.slice(7), 'hex');
  const mac = createHmac('sha256', SECRET).update(timestamp).update('.').update(body).digest();
  if (given.length !== mac.length || !timingSafeEqual(given, mac)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const alert = JSON.parse(body.toString('utf8')) as { event?: unknown };
  return alert.event === 'churn_risk_alert';
}

/** `handVerified` on a genuine delivery, which it must accept (the in-process benchmarks). */
export function handCheck({ body, headers }: Delivery): void {
  const ok = handVerified(body, headers['x-service-signature'], headers['x-service-timestamp']);
  if (!ok) throw new Error('the hand-written check refused a genuine delivery');
}
