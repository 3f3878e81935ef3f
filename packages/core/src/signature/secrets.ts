import { utf8Encoder } from './bytes.js';

/** One signing secret, or several while rotating (any one may match). */
export type Secret = string | readonly string[];

/**
 * The UTF-8 bytes of each secret (no decoding of prefixes). Throws a `TypeError` for a missing or
 * empty secret: that is a configuration mistake, not a bad delivery.
 */
export function secretKeys(secret: Secret): Uint8Array[] {
  const list: readonly unknown[] = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError('A webhook secret is required: a non-empty string or an array of them.');
  }
  return list.map((item) => {
    if (typeof item !== 'string' || item.length === 0) {
      throw new TypeError('Each webhook secret must be a non-empty string.');
    }
    return utf8Encoder.encode(item);
  });
}
