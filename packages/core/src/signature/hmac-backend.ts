/** One piece of the signed content: bytes, or a string taken as its UTF-8 bytes. */
export type HmacPart = string | Uint8Array;

/**
 * The HMAC back end seen by the signing and verification code. Two implementations exist:
 * `hmac-node.ts` (node:crypto) and `hmac-web.ts` (@noble/hashes, for edge runtimes and browsers).
 * The package's `imports` map (`#hmac`) picks one by export condition at resolution time.
 */
export interface HmacBackend {
  /** Name of the back end, for diagnostics and benchmarks. */
  readonly name: 'node:crypto' | '@noble/hashes';
  /** HMAC-SHA256 of the concatenation of `parts` under `key`. Returns the 32-byte digest. */
  hmacSha256(key: Uint8Array, parts: readonly HmacPart[]): Uint8Array;
  /**
   * Whether the HMAC-SHA256 of `parts` under `key` equals one of `candidates`. Every candidate is
   * compared, each in time that depends only on its length; the digest never leaves the back end.
   */
  matchesAny(
    key: Uint8Array,
    parts: readonly HmacPart[],
    candidates: readonly Uint8Array[],
  ): boolean;
  /**
   * `matchesAny` for a back end whose fastest HMAC there is asynchronous (WebCrypto's
   * `crypto.subtle`, faster than @noble/hashes in workerd). `data` is the whole signed content in
   * one buffer, as WebCrypto takes it. Same guarantees as `matchesAny`. Only `hmac-web.ts` has it;
   * `hmac-node.ts` leaves it out, so that the receiver keeps its synchronous path on node:crypto.
   */
  matchesAnyAsync?(
    key: Uint8Array,
    data: Uint8Array<ArrayBuffer>,
    candidates: readonly Uint8Array[],
  ): Promise<boolean>;
}
