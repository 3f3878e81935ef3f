import { backend } from '#hmac';
import { WebhookVerificationError } from '../errors/webhook-verification-error.js';
import { toHmacPart, type RawBody } from './bytes.js';
import {
  headerText,
  parseSignatureHeader,
  parseTimestampHeader,
  type HeaderValue,
} from './parse-headers.js';
import { secretKeys, type Secret } from './secrets.js';
import { signedParts, type SignedContent } from './signed-content.js';

const SIGNED_CONTENT_MODES: ReadonlySet<string> = new Set(['timestamp.body', 'body']);

/** Default tolerance between the sender's timestamp and the receiver's clock, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Options shared by `verifySignature` and the receiver's verifier. */
export interface VerifierOptions {
  /** The signing secret, or several while rotating. Its UTF-8 bytes are the HMAC key. */
  secret: Secret;
  /** Largest allowed `|now - timestamp|`, in seconds. Default 300. */
  tolerance?: number;
  /** What the signature covers. Default `'timestamp.body'`. */
  signedContent?: SignedContent;
  /** Clock in milliseconds, like `Date.now`. */
  now?: () => number;
}

/** The three things a delivery is checked by. */
export interface DeliveryToVerify {
  /** The raw request body exactly as received. */
  body: RawBody;
  /** The signature header's value (`sha256=<hex>`, several separated by `,`). */
  signature: HeaderValue;
  /** The timestamp header's value (Unix seconds). */
  timestamp: HeaderValue;
}

/** A verification function with its secrets and options prepared once. */
export type Verifier = (delivery: DeliveryToVerify) => void;

/** A verifier's options, resolved and checked once. Internal (the receiver's verifier shares it). */
export interface VerifierSettings {
  keys: readonly Uint8Array[];
  tolerance: number;
  mode: SignedContent;
  now: () => number;
}
type Settings = VerifierSettings;

function checkOptions(tolerance: number, mode: SignedContent): void {
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError('tolerance must be a non-negative number of seconds.');
  }
  if (!SIGNED_CONTENT_MODES.has(mode)) {
    throw new TypeError(`signedContent must be 'timestamp.body' or 'body'.`);
  }
}

/**
 * The refusals of `check`, one function each, so that the receiver's asynchronous verifier
 * (`receiver-verifier.ts`) throws exactly the same errors. Internal.
 */
export const refusal = {
  missingSignature: (): WebhookVerificationError =>
    new WebhookVerificationError('MISSING_SIGNATURE', 'The signature header is missing.'),
  missingTimestamp: (): WebhookVerificationError =>
    new WebhookVerificationError('MISSING_TIMESTAMP', 'The timestamp header is missing.'),
  noMatch: (): WebhookVerificationError =>
    new WebhookVerificationError(
      'INVALID_SIGNATURE',
      'No signature matches the body and any configured secret.',
    ),
  outOfTolerance: (tolerance: number): WebhookVerificationError =>
    new WebhookVerificationError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `The timestamp is more than ${tolerance} seconds away from the receiver's clock.`,
    ),
};

/** Whether `seconds` (the sender's timestamp) is too far from the settings' clock. Internal. */
export function outOfTolerance(settings: Settings, seconds: number): boolean {
  return Math.abs(settings.now() / 1000 - seconds) > settings.tolerance;
}

/**
 * Receives the usual single signature's bytes, so that no array is allocated per delivery. Shared
 * safely: from parsing to comparison, `check` runs no code but ours and the HMAC back end's.
 */
const scratch = new Uint8Array(32);

/** Checks one delivery in the SPEC's order: headers present, timestamp format, signature, tolerance. */
function check(settings: Settings, { body, signature, timestamp }: DeliveryToVerify): void {
  const signatureText = headerText(signature);
  if (signatureText === undefined) throw refusal.missingSignature();
  const timestampText = headerText(timestamp);
  if (timestampText === undefined) throw refusal.missingTimestamp();
  const seconds = parseTimestampHeader(timestampText);
  const candidates = parseSignatureHeader(signatureText, scratch);

  const parts = signedParts(settings.mode, timestampText, toHmacPart(body));
  let matched = false;
  // Every key against every candidate, without stopping early.
  for (const key of settings.keys) {
    matched = backend.matchesAny(key, parts, candidates) || matched;
  }
  if (!matched) throw refusal.noMatch();
  if (outOfTolerance(settings, seconds)) throw refusal.outOfTolerance(settings.tolerance);
}

/**
 * Prepares verification for many deliveries: the secrets are encoded once. The returned function
 * returns nothing or throws `WebhookVerificationError`, checking in the SPEC's order: headers
 * present, timestamp format, signature, tolerance.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const settings = verifierSettings(options);
  return (delivery) => {
    check(settings, delivery);
  };
}

/**
 * `options` resolved (defaults applied, secrets encoded) and checked: `TypeError` for a missing
 * secret or a bad option. Internal: `createVerifier` and the receiver's verifier share it.
 */
export function verifierSettings(options: VerifierOptions): VerifierSettings {
  const settings: Settings = {
    keys: secretKeys(options.secret),
    tolerance: options.tolerance ?? DEFAULT_TOLERANCE_SECONDS,
    mode: options.signedContent ?? 'timestamp.body',
    now: options.now ?? Date.now,
  };
  checkOptions(settings.tolerance, settings.mode);
  return settings;
}

/** Options of `verifySignature`. */
export interface VerifySignatureOptions extends DeliveryToVerify {
  secret: Secret;
  tolerance?: number;
  signedContent?: SignedContent;
  /** The current time: milliseconds since the epoch, a `Date`, or a clock. Default `Date.now()`. */
  now?: number | Date | (() => number);
}

function clock(now: VerifySignatureOptions['now']): () => number {
  if (now === undefined) return Date.now;
  if (typeof now === 'function') return now;
  const ms = now instanceof Date ? now.getTime() : now;
  return () => ms;
}

/** Encoded keys of recently used secrets, so that one-off calls do not re-encode them each time. */
const keyCache = new Map<string, Uint8Array[]>();
const KEY_CACHE_SIZE = 16;

function cachedKeys(secret: Secret): Uint8Array[] {
  if (typeof secret !== 'string') return secretKeys(secret);
  let keys = keyCache.get(secret);
  if (keys === undefined) {
    keys = secretKeys(secret);
    if (keyCache.size >= KEY_CACHE_SIZE) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}

/**
 * Verifies one webhook delivery (SPEC section 2). Returns nothing when valid; throws
 * `WebhookVerificationError` with `code` and `status` otherwise. Throws `TypeError` for a missing
 * secret or a bad option.
 *
 * @example
 * verifySignature({
 *   body: rawBody,
 *   signature: req.headers['x-service-signature'],
 *   timestamp: req.headers['x-service-timestamp'],
 *   secret: process.env.CHURN_RISK_WEBHOOK_SECRET!,
 * });
 */
export function verifySignature(options: VerifySignatureOptions): void {
  const settings: Settings = {
    keys: cachedKeys(options.secret),
    tolerance: options.tolerance ?? DEFAULT_TOLERANCE_SECONDS,
    mode: options.signedContent ?? 'timestamp.body',
    now: clock(options.now),
  };
  checkOptions(settings.tolerance, settings.mode);
  check(settings, options);
}
