import { backend } from '#hmac';
import { checkAsync, type ReceiverVerifier } from './verify-async.js';
import { createVerifier, verifierSettings, type VerifierOptions } from './verify.js';

export type { ReceiverVerifier } from './verify-async.js';

/**
 * The receiver's verifier for this runtime's HMAC back end (the fastest one measured
 * there). On node:crypto (Node, Bun, Deno) it is `createVerifier(options)` itself: synchronous,
 * returns `undefined`. Where the back end has an asynchronous matcher and `crypto.subtle` exists
 * (browsers, edge runtimes), it returns a promise: the same checks, in the same order and with the
 * same errors, with the HMAC computed by `crypto.subtle`. Throws `TypeError` for a missing secret
 * or a bad option, at once, like `createVerifier`. This is `#receiver-verifier` everywhere but
 * workerd (`receiver-verifier-workerd.ts`).
 *
 * Internal: the public `verifySignature` and `createVerifier` stay synchronous, because a caller
 * who forgets to await a promise must never accept a forged delivery. The receiver awaits this one.
 */
export function createReceiverVerifier(options: VerifierOptions): ReceiverVerifier {
  const subtle = (globalThis as { crypto?: { subtle?: unknown } }).crypto?.subtle;
  const matchesAny = backend.matchesAnyAsync?.bind(backend);
  if (matchesAny === undefined || subtle === undefined) return createVerifier(options);
  const settings = verifierSettings(options);
  return (delivery) => checkAsync(settings, matchesAny, delivery);
}
