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
