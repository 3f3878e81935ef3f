import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacBackend } from './hmac-backend.js';

/** HMAC back end on node:crypto (OpenSSL). Selected by the `node` export condition. */
export const backend: HmacBackend = {
  name: 'node:crypto',
  hmacSha256(key, parts) {
    const hmac = createHmac('sha256', key);
    // Strings go to OpenSSL as UTF-8 without a JavaScript-side encode.
    for (const part of parts) hmac.update(part);
    return hmac.digest();
  },
  timingSafeEqual(a, b) {
    return a.length === b.length && timingSafeEqual(a, b);
  },
};
