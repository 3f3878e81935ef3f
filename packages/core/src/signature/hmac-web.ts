import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { HmacBackend } from './hmac-backend.js';
import { constantTimeEqual } from './constant-time-equal.js';

const encoder = new TextEncoder();

/** HMAC back end on @noble/hashes: pure JavaScript, for runtimes without node:crypto. */
export const backend: HmacBackend = {
  name: '@noble/hashes',
  hmacSha256(key, parts) {
    const mac = hmac.create(sha256, key);
    for (const part of parts) mac.update(typeof part === 'string' ? encoder.encode(part) : part);
    return mac.digest();
  },
  timingSafeEqual: constantTimeEqual,
};
