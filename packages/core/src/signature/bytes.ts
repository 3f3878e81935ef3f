const encoder = new TextEncoder();

/** A request body as received: the raw bytes, or a string (taken as its UTF-8 bytes). */
export type RawBody = string | Uint8Array | ArrayBuffer;

/** The UTF-8 bytes of a string, or a view of the given bytes (never a copy). */
export function toBytes(body: RawBody): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  return new Uint8Array(body);
}

/** A body as the HMAC takes it: strings stay strings (the back end encodes them), buffers become views. */
export function toHmacPart(body: RawBody): string | Uint8Array {
  return typeof body === 'string' || body instanceof Uint8Array ? body : new Uint8Array(body);
}

const HEX_PAIRS: readonly string[] = Array.from({ length: 256 }, (_, i) =>
  i.toString(16).padStart(2, '0'),
);

/** Lower-case hex of the bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX_PAIRS[byte] ?? '';
  return out;
}

/** Value of each ASCII hex digit by character code; -1 for anything else. */
const HEX_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUES[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUES[65 + i] = 10 + i;
  HEX_VALUES[97 + i] = 10 + i;
}

function hexValue(code: number): number {
  return code < 128 ? (HEX_VALUES[code] as number) : -1;
}

/**
 * Decodes the `2 * out.length` hex digits of `text` from `offset` into `out`. False (and `out` in
 * an unspecified state) when `text` is too short or a character is not a hex digit.
 */
export function decodeHexInto(text: string, offset: number, out: Uint8Array): boolean {
  if (text.length - offset < out.length * 2) return false;
  for (let i = 0; i < out.length; i++) {
    const hi = hexValue(text.charCodeAt(offset + 2 * i));
    const lo = hexValue(text.charCodeAt(offset + 2 * i + 1));
    if (hi < 0 || lo < 0) return false;
    out[i] = (hi << 4) | lo;
  }
  return true;
}

/** Decodes hex of exactly `2 * length` characters; `undefined` for anything else. */
export function fromHex(hex: string, length: number): Uint8Array | undefined {
  if (hex.length !== length * 2) return undefined;
  const out = new Uint8Array(length);
  return decodeHexInto(hex, 0, out) ? out : undefined;
}

export { encoder as utf8Encoder };

/**
 * Compares two byte arrays in time that depends only on their length, never on where they differ.
 * Arrays of different lengths are unequal (the length of an HMAC digest is public).
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
