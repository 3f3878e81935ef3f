import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { HmacBackend, HmacPart } from './hmac-backend.js';
import { equalsAny, matchesAnyWebCrypto } from './webcrypto-hmac.js';

const encoder = new TextEncoder();

/** HMAC-SHA256 of the concatenation of `parts` (strings as UTF-8) under `key`. */
function hmacSha256(key: Uint8Array, parts: readonly HmacPart[]): Uint8Array {
  const mac = hmac.create(sha256, key);
  for (const part of parts) mac.update(typeof part === 'string' ? encoder.encode(part) : part);
  return mac.digest();
}

/** WebCrypto, where the runtime has it (workerd, browsers, Deno, Bun, Node >= 19). */
function subtleCrypto(): SubtleCrypto | undefined {
  return (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
}

/**
 * HMAC back end for runtimes without node:crypto: @noble/hashes (pure JavaScript) for the
 * synchronous calls, and WebCrypto's `crypto.subtle` for `matchesAnyAsync` (falling back to
 * @noble/hashes where `crypto.subtle` is missing).
 */
export const backend: HmacBackend = {
  name: '@noble/hashes',
  hmacSha256,
  matchesAny(key, parts, candidates) {
    return equalsAny(hmacSha256(key, parts), candidates);
  },
  async matchesAnyAsync(key, data, candidates) {
    const subtle = subtleCrypto();
    // WebCrypto refuses an empty HMAC key; the receiver never has one, but the back end allows it.
    if (subtle === undefined || key.length === 0) {
      return equalsAny(hmacSha256(key, [data]), candidates);
    }
    return matchesAnyWebCrypto(subtle, key, data, candidates);
  },
};
