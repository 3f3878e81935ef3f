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

/**
 * `constantTimeEqual` for a digest held as a Latin-1 string (one char code per byte, what
 * `digest('latin1')` gives): same guarantees, no byte array needed for the digest.
 */
export function constantTimeEqualLatin1(a: string, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  // A char code above 0xff (not a Latin-1 digest) leaves bits set in `diff`: unequal.
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ (b[i] as number);
  return diff === 0;
}
