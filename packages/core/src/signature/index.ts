export { signPayload, type SignPayloadOptions, type SignedHeaders } from './sign.js';
export {
  verifySignature,
  createVerifier,
  DEFAULT_TOLERANCE_SECONDS,
  type VerifySignatureOptions,
  type VerifierOptions,
  type DeliveryToVerify,
  type Verifier,
} from './verify.js';
export type { SignedContent } from './verify.js';
export type { Secret } from './secrets.js';
export type { RawBody } from './bytes.js';
export type { HeaderValue } from './verify.js';
