import { backend } from '#hmac';
import { toHex, toHmacPart, type RawBody } from './bytes.js';
import { secretKeys, type Secret } from './secrets.js';
import { signedParts, type SignedContent } from './verify.js';

/** Options of `signPayload`. */
export interface SignPayloadOptions {
  /** The exact bytes (or string) that will be sent as the request body. */
  body: RawBody;
  /** The signing secret; with several, one signature per secret, comma-separated. */
  secret: Secret;
  /** Unix time in seconds, or a `Date`. Default: now. */
  timestamp?: number | Date;
  /** What the signature covers. Default `'timestamp.body'`. */
  signedContent?: SignedContent;
}

/** The two header values of a signed delivery. */
export interface SignedHeaders {
  /** Value of `X-Service-Signature`: `sha256=<hex>`, several separated by `, `. */
  signature: string;
  /** Value of `X-Service-Timestamp`: Unix seconds. */
  timestamp: string;
}

/**
 * Signs a webhook body the way the service does and returns the header values.
 *
 * @example
 * const { signature, timestamp } = signPayload({ body, secret });
 */
export function signPayload(options: SignPayloadOptions): SignedHeaders {
  const keys = secretKeys(options.secret);
  const when = options.timestamp ?? Date.now() / 1000;
  const seconds = when instanceof Date ? when.getTime() / 1000 : when;
  // Unix seconds, 12 digits at most: a 13-digit value is almost surely `Date.now()` milliseconds.
  if (!Number.isFinite(seconds) || seconds < 0 || seconds >= 1e12) {
    throw new TypeError(
      'timestamp must be Unix time in seconds (at most 12 digits; not milliseconds) or a Date.',
    );
  }
  const timestamp = String(Math.floor(seconds));
  const parts = signedParts(
    options.signedContent ?? 'timestamp.body',
    timestamp,
    toHmacPart(options.body),
  );
  const signature = keys.map((key) => `sha256=${toHex(backend.hmacSha256(key, parts))}`).join(', ');
  return { signature, timestamp };
}
