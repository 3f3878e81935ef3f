import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { HmacBackend } from './hmac-backend.js';

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

/** HMAC back end on node:crypto (OpenSSL). Selected by the `node` export condition. */
export const backend: HmacBackend = {
  name: 'node:crypto',
  hmacSha256(key, parts) {
    // An empty key cannot be a KeyObject; the receiver never has one, but the back end allows it.
    const hmac = createHmac('sha256', key.length > 0 ? keyObject(key) : key);
    // Strings go to OpenSSL as UTF-8 without a JavaScript-side encode.
    for (const part of parts) hmac.update(part);
    return hmac.digest();
  },
  timingSafeEqual(a, b) {
    return a.length === b.length && timingSafeEqual(a, b);
  },
};
