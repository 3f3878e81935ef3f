import { constantTimeEqual } from './bytes.js';

/** Whether `expected` equals one of `candidates`: every one compared, in constant time each. */
export function equalsAny(expected: Uint8Array, candidates: readonly Uint8Array[]): boolean {
  let matched = false;
  for (const candidate of candidates) matched = constantTimeEqual(expected, candidate) || matched;
  return matched;
}

// Importing a key costs about as much as one HMAC; keys are long-lived (one per configured
// secret), so each is imported once, cached by identity. The promise is cached, so that deliveries
// arriving together share one import.
const cryptoKeys = new WeakMap<Uint8Array, Promise<CryptoKey>>();

function cryptoKey(subtle: SubtleCrypto, key: Uint8Array): Promise<CryptoKey> {
  let imported = cryptoKeys.get(key);
  if (imported === undefined) {
    imported = subtle.importKey(
      'raw',
      Uint8Array.from(key),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    // A failed import is not kept: the next delivery tries again.
    void imported.catch(() => cryptoKeys.delete(key));
    cryptoKeys.set(key, imported);
  }
  return imported;
}

/**
 * Whether the HMAC-SHA256 of `data` under `key`, computed by WebCrypto's `subtle`, equals one of
 * `candidates` (each compared in constant time). `key` must not be empty: WebCrypto refuses it.
 */
export async function matchesAnyWebCrypto(
  subtle: SubtleCrypto,
  key: Uint8Array,
  data: Uint8Array<ArrayBuffer>,
  candidates: readonly Uint8Array[],
): Promise<boolean> {
  const digest = await subtle.sign('HMAC', await cryptoKey(subtle, key), data);
  return equalsAny(new Uint8Array(digest), candidates);
}
