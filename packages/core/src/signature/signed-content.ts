import { utf8Encoder } from './bytes.js';

/**
 * What the HMAC covers. `'timestamp.body'` (default): the timestamp header's exact text, `.`, then
 * the raw body. `'body'`: the raw body alone (the timestamp is then not bound by the signature).
 */
export type SignedContent = 'timestamp.body' | 'body';

const DOT = new Uint8Array([0x2e]);

/** The byte parts to feed the HMAC, without concatenating (no copy of the body). */
export function signedParts(
  mode: SignedContent,
  timestamp: string,
  body: Uint8Array,
): readonly Uint8Array[] {
  return mode === 'body' ? [body] : [utf8Encoder.encode(timestamp), DOT, body];
}
