import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { HmacBackend, HmacPart } from './hmac-backend.js';
import { constantTimeEqual } from './constant-time-equal.js';

const encoder = new TextEncoder();

/** HMAC-SHA256 of the concatenation of `parts` (strings as UTF-8) under `key`. */
function hmacSha256(key: Uint8Array, parts: readonly HmacPart[]): Uint8Array {
  const mac = hmac.create(sha256, key);
  for (const part of parts) mac.update(typeof part === 'string' ? encoder.encode(part) : part);
  return mac.digest();
}

/** HMAC back end on @noble/hashes: pure JavaScript, for runtimes without node:crypto. */
export const backend: HmacBackend = {
  name: '@noble/hashes',
  hmacSha256,
  matchesAny(key, parts, candidates) {
    const expected = hmacSha256(key, parts);
    let matched = false;
    for (const candidate of candidates) matched = constantTimeEqual(expected, candidate) || matched;
    return matched;
  },
};
