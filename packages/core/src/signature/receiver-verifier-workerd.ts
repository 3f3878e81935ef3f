import { checkAsync, type ReceiverVerifier } from './verify-async.js';
import { verifierSettings, type VerifierOptions } from './verify.js';
import { matchesAnyWebCrypto } from './webcrypto-hmac.js';

/**
 * `#receiver-verifier` in workerd (the `workerd` export condition: Cloudflare Workers, wrangler,
 * miniflare), where `crypto.subtle` always exists: the receiver's verifier of
 * `receiver-verifier.ts` on its WebCrypto path, without a synchronous HMAC. A worker bundle then
 * holds no @noble/hashes unless the worker itself signs or verifies synchronously
 * (`signPayload`, `verifySignature`, `createVerifier`, which keep `#hmac`). The receiver never
 * has an empty key (WebCrypto refuses one): `verifierSettings` throws `TypeError` for it first.
 */
export function createReceiverVerifier(options: VerifierOptions): ReceiverVerifier {
  const settings = verifierSettings(options);
  const { subtle } = crypto;
  return (delivery) =>
    checkAsync(
      settings,
      (key, data, candidates) => matchesAnyWebCrypto(subtle, key, data, candidates),
      delivery,
    );
}
