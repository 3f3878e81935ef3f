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

/** A view with the type WebCrypto takes: the same bytes, copied only when not on an ArrayBuffer. */
function onArrayBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer
    ? (bytes as Uint8Array<ArrayBuffer>)
    : Uint8Array.from(bytes);
}

/**
 * The signed content in one buffer, for HMACs that take one (WebCrypto): the body itself in
 * `'body'` mode (no copy), else the timestamp's ASCII digits, `.` and the body copied after them.
 */
export function signedBytes(
  mode: SignedContent,
  timestamp: string,
  body: Uint8Array,
): Uint8Array<ArrayBuffer> {
  if (mode === 'body') return onArrayBuffer(body);
  // `timestamp` is 1 to 12 ASCII digits (checked before): one byte per character.
  const data = new Uint8Array(timestamp.length + 1 + body.length);
  for (let i = 0; i < timestamp.length; i++) data[i] = timestamp.charCodeAt(i);
  data[timestamp.length] = 0x2e;
  data.set(body, timestamp.length + 1);
  return data;
}
