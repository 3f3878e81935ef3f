import type { ReceiverResult } from '../receiver/types.js';

/**
 * The code of the `500` an adapter answers when a body parser read the request body and kept no
 * raw bytes (the signature covers the bytes, so nothing can be verified).
 */
export const RAW_BODY_MISSING = 'RAW_BODY_MISSING';

const MESSAGE =
  'The request body was already read by a body parser, which kept no raw bytes, so the webhook ' +
  'signature cannot be verified.';

/**
 * The adapters' answer when a body parser consumed the body: `500`,
 * `{"error":{"code":"RAW_BODY_MISSING","message":...}}`, the message ending with `fix`, what to
 * change in that framework. Never echoes the request.
 *
 * @example
 * sendNodeResponse(res, rawBodyMissingResult('Mount the middleware before express.json().'));
 */
export function rawBodyMissingResult(fix: string): ReceiverResult {
  return {
    status: 500,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { code: RAW_BODY_MISSING, message: `${MESSAGE} ${fix}` } }),
    done: Promise.resolve(),
  };
}
