import { createVerifier, type VerifierOptions } from './verify.js';
import type { ReceiverVerifier } from './verify-async.js';

export type { ReceiverVerifier } from './verify-async.js';

/**
 * `#receiver-verifier` under the `node` export condition (Node, Bun, Deno), where `#hmac` is
 * `hmac-node.ts` (node:crypto, synchronous): the receiver's verifier is `createVerifier` itself,
 * as `receiver-verifier.ts` would choose there, and a bundle for Node (a Lambda function) holds
 * none of the asynchronous path (`checkAsync`), which only a WebCrypto back end uses.
 */
export function createReceiverVerifier(options: VerifierOptions): ReceiverVerifier {
  return createVerifier(options);
}
