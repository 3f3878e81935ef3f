import { toBytes } from './bytes.js';
import {
  headerText,
  outOfTolerance,
  parseSignatureHeader,
  parseTimestampHeader,
  refusal,
  signedBytes,
  type DeliveryToVerify,
  type VerifierSettings,
} from './verify.js';

/**
 * The receiver's verification step: returns nothing (synchronous back end) or a promise
 * (asynchronous back end). Either way a refused delivery ends in a `WebhookVerificationError`:
 * thrown by the synchronous one, a rejection of the asynchronous one's promise.
 */
export type ReceiverVerifier = (delivery: DeliveryToVerify) => void | Promise<void>;

/** An asynchronous HMAC matcher: `matchesAnyAsync` of `hmac-backend.ts`. */
export type AsyncMatcher = (
  key: Uint8Array,
  data: Uint8Array<ArrayBuffer>,
  candidates: readonly Uint8Array[],
) => Promise<boolean>;

/**
 * `check` of `verify.ts` with the HMAC awaited: the same steps in the same order, with the same
 * errors (headers present, timestamp format, signature parse, every key against every candidate
 * without stopping early, then tolerance).
 */
export async function checkAsync(
  settings: VerifierSettings,
  matchesAny: AsyncMatcher,
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
    matched = (await matchesAny(key, data, candidates)) || matched;
  }
  if (!matched) throw refusal.noMatch();
  if (outOfTolerance(settings, seconds)) throw refusal.outOfTolerance(settings.tolerance);
}
