const encoder = new TextEncoder();

/** A request body as received: the raw bytes, or a string (taken as its UTF-8 bytes). */
export type RawBody = string | Uint8Array | ArrayBuffer;

/** The UTF-8 bytes of a string, or a view of the given bytes (never a copy). */
export function toBytes(body: RawBody): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  return new Uint8Array(body);
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

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 97 && code <= 102) return code - 87; // a-f
  if (code >= 65 && code <= 70) return code - 55; // A-F
  return -1;
}

/** Decodes hex of exactly `2 * length` characters; `undefined` for anything else. */
export function fromHex(hex: string, length: number): Uint8Array | undefined {
  if (hex.length !== length * 2) return undefined;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const hi = hexValue(hex.charCodeAt(2 * i));
    const lo = hexValue(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return undefined;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

export { encoder as utf8Encoder };
