import { backend } from '#hmac';
import { toBytes } from './bytes.js';
import type { HmacBackend } from './hmac-backend.js';
import { headerText, parseSignatureHeader, parseTimestampHeader } from './verify.js';
import { signedBytes } from './verify.js';
import {
  createVerifier,
  outOfTolerance,
  refusal,
  verifierSettings,
  type DeliveryToVerify,
  type VerifierOptions,
  type VerifierSettings,
} from './verify.js';

/**
 * The receiver's verification step: returns nothing (synchronous back end) or a promise
 * (asynchronous back end). Either way a refused delivery ends in a `WebhookVerificationError`:
 * thrown by the synchronous one, a rejection of the asynchronous one's promise.
 */
export type ReceiverVerifier = (delivery: DeliveryToVerify) => void | Promise<void>;

/** A back end with an asynchronous matcher. */
type AsyncBackend = HmacBackend & Required<Pick<HmacBackend, 'matchesAnyAsync'>>;

function isAsync(hmac: HmacBackend): hmac is AsyncBackend {
  return hmac.matchesAnyAsync !== undefined;
}

/**
 * `check` of `verify.ts` with the HMAC awaited: the same steps in the same order, with the same
 * errors (headers present, timestamp format, signature parse, every key against every candidate
 * without stopping early, then tolerance).
 */
async function checkAsync(
  settings: VerifierSettings,
  hmac: AsyncBackend,
  { body, signature, timestamp }: DeliveryToVerify,
): Promise<void> {
  const signatureText = headerText(signature);
  if (signatureText === undefined) throw refusal.missingSignature();
  const timestampText = headerText(timestamp);
  if (timestampText === undefined) throw refusal.missingTimestamp();
  const seconds = parseTimestampHeader(timestampText);
  // Own arrays, not `verify.ts`'s shared scratch buffer: other deliveries run during the awaits.
  const candidates = parseSignatureHeader(signatureText);

  const data = signedBytes(settings.mode, timestampText, toBytes(body));
  let matched = false;
  for (const key of settings.keys) {
    matched = (await hmac.matchesAnyAsync(key, data, candidates)) || matched;
  }
  if (!matched) throw refusal.noMatch();
  if (outOfTolerance(settings, seconds)) throw refusal.outOfTolerance(settings.tolerance);
}

/**
 * The receiver's verifier for this runtime's HMAC back end (SPEC 12: the fastest one measured
 * there). On node:crypto (Node, Bun, Deno) it is `createVerifier(options)` itself: synchronous,
 * returns `undefined`. Where the back end has an asynchronous matcher and `crypto.subtle` exists
 * (workerd, browsers), it returns a promise: the same checks, in the same order and with the same
 * errors, with the HMAC computed by `crypto.subtle`. Throws `TypeError` for a missing secret or a
 * bad option, at once, like `createVerifier`.
 *
 * Internal: the public `verifySignature` and `createVerifier` stay synchronous, because a caller
 * who forgets to await a promise must never accept a forged delivery. The receiver awaits this one.
 */
export function createReceiverVerifier(options: VerifierOptions): ReceiverVerifier {
  const subtle = (globalThis as { crypto?: { subtle?: unknown } }).crypto?.subtle;
  if (!isAsync(backend) || subtle === undefined) return createVerifier(options);
  const settings = verifierSettings(options);
  const hmac = backend;
  return (delivery) => checkAsync(settings, hmac, delivery);
}
