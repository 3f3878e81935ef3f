import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { HmacBackend, HmacPart } from './hmac-backend.js';
import { constantTimeEqual } from './bytes.js';

const encoder = new TextEncoder();

/** HMAC-SHA256 of the concatenation of `parts` (strings as UTF-8) under `key`. */
function hmacSha256(key: Uint8Array, parts: readonly HmacPart[]): Uint8Array {
  const mac = hmac.create(sha256, key);
  for (const part of parts) mac.update(typeof part === 'string' ? encoder.encode(part) : part);
  return mac.digest();
}

/** Whether `expected` equals one of `candidates`: every one compared, in constant time each. */
function equalsAny(expected: Uint8Array, candidates: readonly Uint8Array[]): boolean {
  let matched = false;
  for (const candidate of candidates) matched = constantTimeEqual(expected, candidate) || matched;
  return matched;
}

/** WebCrypto, where the runtime has it (workerd, browsers, Deno, Bun, Node >= 19). */
function subtleCrypto(): SubtleCrypto | undefined {
  return (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
}

// Importing a key costs about as much as one HMAC; keys are long-lived (one per configured
// secret), so each is imported once, cached by identity. The promise is cached, so that deliveries
// arriving together share one import.
const cryptoKeys = new WeakMap<Uint8Array, Promise<CryptoKey>>();

function cryptoKey(subtle: SubtleCrypto, key: Uint8Array): Promise<CryptoKey> {
  let imported = cryptoKeys.get(key);
  if (imported === undefined) {
    imported = subtle.importKey(
      'raw',
      Uint8Array.from(key),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    // A failed import is not kept: the next delivery tries again.
    void imported.catch(() => cryptoKeys.delete(key));
    cryptoKeys.set(key, imported);
  }
  return imported;
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
    const digest = await subtle.sign('HMAC', await cryptoKey(subtle, key), data);
    return equalsAny(new Uint8Array(digest), candidates);
  },
};
