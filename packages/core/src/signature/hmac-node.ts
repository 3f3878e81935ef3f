import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { HmacBackend, HmacPart } from './hmac-backend.js';

// A KeyObject spares OpenSSL the key's preparation on every HMAC; keys are long-lived (one per
// configured secret), so they are cached by identity.
const keyObjects = new WeakMap<Uint8Array, KeyObject>();

function keyObject(key: Uint8Array): KeyObject {
  let object = keyObjects.get(key);
  if (object === undefined) {
    object = createSecretKey(key);
    keyObjects.set(key, object);
  }
  return object;
}

/** An HMAC-SHA256 of `parts` under `key`, not yet digested. */
function hmacOf(key: Uint8Array, parts: readonly HmacPart[]): ReturnType<typeof createHmac> {
  // An empty key cannot be a KeyObject; the receiver never has one, but the back end allows it.
  const hmac = createHmac('sha256', key.length > 0 ? keyObject(key) : key);
  // Strings go to OpenSSL as UTF-8 without a JavaScript-side encode.
  for (const part of parts) hmac.update(part);
  return hmac;
}

/** HMAC back end on node:crypto (OpenSSL). Selected by the `node` export condition. */
export const backend: HmacBackend = {
  name: 'node:crypto',
  hmacSha256(key, parts) {
    return hmacOf(key, parts).digest();
  },
  matchesAny(key, parts, candidates) {
    // The digest as a Latin-1 string (`'binary'` is Node's name for Latin-1; one char code per
    // byte): Node makes a 32-char string much faster than a Buffer, a good part
    // of a verification at small bodies. The comparison is the XOR-accumulating
    // loop of `constantTimeEqual`, with no early exit.
    const expected = hmacOf(key, parts).digest('binary');
    let matched = false;
    for (const candidate of candidates) {
      matched = constantTimeEqualLatin1(expected, candidate) || matched;
    }
    return matched;
  },
};

/**
 * `constantTimeEqual` (bytes.ts) for a digest held as a Latin-1 string (one char code per byte, what
 * `digest('latin1')` gives): same guarantees, no byte array needed for the digest. Kept in this
 * file, the one that calls it, so that it is bundled into the node:crypto back end's own module.
 */
export function constantTimeEqualLatin1(a: string, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  // A char code above 0xff (not a Latin-1 digest) leaves bits set in `diff`: unequal.
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ (b[i] as number);
  return diff === 0;
}
