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

const HEX_PAIRS: readonly string[] = /* @__PURE__ */ Array.from({ length: 256 }, (_, i) =>
  i.toString(16).padStart(2, '0'),
);

/** Lower-case hex of the bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX_PAIRS[byte] ?? '';
  return out;
}

/**
 * The value of an ASCII hex digit's character code (either case); -1 for anything else. Computed,
 * not looked up in a table built at load time, which a bundle would keep even where unused.
 */
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  const lower = code | 32; // A-F to a-f; no other character lands in a-f
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
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
