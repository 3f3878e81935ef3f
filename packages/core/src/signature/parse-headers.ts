import { WebhookVerificationError } from '../errors/webhook-verification-error.js';
import { decodeHexInto, fromHex } from './bytes.js';

/** Most signatures accepted in one header (a rotating sender sends two or three). */
export const MAX_SIGNATURES = 8;
const SCHEME = 'sha256=';
const DIGEST_BYTES = 32;
const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/;

/** A header value as frameworks hand it over: absent, one string, or repeated. */
export type HeaderValue = string | readonly string[] | null | undefined;

/** One header's text; `undefined` when absent or empty. Repeated values are joined with ", ". */
export function headerText(value: HeaderValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  // Node joins repeated custom headers with ", "; do the same for arrays.
  const text = typeof value === 'string' ? value : value.join(', ');
  if (text.length === 0) return undefined;
  // Only an all-blank value needs the trim; a value starting with a visible character cannot be.
  return text.charCodeAt(0) > 32 || text.trim() !== '' ? text : undefined;
}

/**
 * Parses `X-Service-Signature`: one or more `sha256=<64 hex>` separated by `,` with optional
 * spaces. Any malformed item makes the whole header invalid. `into` (32 bytes), when given,
 * receives the usual single signature instead of a new array of bytes.
 */
export function parseSignatureHeader(text: string, into?: Uint8Array): Uint8Array[] {
  // Fast path: the usual single signature with nothing around it.
  if (text.length === SCHEME.length + DIGEST_BYTES * 2 && text.startsWith(SCHEME)) {
    const digest = into ?? new Uint8Array(DIGEST_BYTES);
    if (decodeHexInto(text, SCHEME.length, digest)) return [digest];
  }
  const items = text.split(',');
  if (items.length > MAX_SIGNATURES) {
    throw new WebhookVerificationError(
      'INVALID_SIGNATURE',
      `The signature header holds more than ${MAX_SIGNATURES} signatures.`,
    );
  }
  return items.map((raw) => {
    const item = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    const digest = item.startsWith(SCHEME)
      ? fromHex(item.slice(SCHEME.length), DIGEST_BYTES)
      : undefined;
    if (digest === undefined) {
      throw new WebhookVerificationError(
        'INVALID_SIGNATURE',
        'The signature header is malformed: expected "sha256=" and 64 hex digits per signature.',
      );
    }
    return digest;
  });
}

/** Parses `X-Service-Timestamp`: Unix seconds, ASCII digits only, at most 12. */
export function parseTimestampHeader(text: string): number {
  if (!TIMESTAMP_PATTERN.test(text)) {
    throw new WebhookVerificationError(
      'INVALID_TIMESTAMP',
      'The timestamp header must be Unix time in whole seconds (1 to 12 ASCII digits).',
    );
  }
  return Number(text);
}
