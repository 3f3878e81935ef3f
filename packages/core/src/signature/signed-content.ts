import type { HmacPart } from './hmac-backend.js';

/**
 * What the HMAC covers. `'timestamp.body'` (default): the timestamp header's exact text, `.`, then
 * the raw body. `'body'`: the raw body alone (the timestamp is then not bound by the signature).
 */
export type SignedContent = 'timestamp.body' | 'body';

/**
 * The parts to feed the HMAC, without concatenating (no copy of the body). `timestamp` is ASCII
 * digits (checked before), so `timestamp + '.'` is exactly its bytes and the dot.
 */
export function signedParts(
  mode: SignedContent,
  timestamp: string,
  body: HmacPart,
): readonly HmacPart[] {
  return mode === 'body' ? [body] : [`${timestamp}.`, body];
}
