import { errorResponse } from './responses.js';
import type { ReceiverResult } from './types.js';
import { IntegrationError } from '../errors/integration-error.js';

/**
 * The code of the `500` an adapter answers when a body parser read the request body and kept no
 * raw bytes (the signature covers the bytes, so nothing can be verified).
 */
export const RAW_BODY_MISSING = 'RAW_BODY_MISSING';

const MESSAGE =
  'A body parser read the request body and kept no raw bytes: the signature cannot be verified.';

/**
 * The error of a body that something read before the receiver: `500 RAW_BODY_MISSING`, the
 * message ending with `fix`, what to change in that framework. Hand it to `receiver.refuse` so
 * that it is logged and reported like any refused delivery.
 *
 * @example
 * sendNodeResponse(res, receiver.refuse(rawBodyMissingError('Mount the middleware before express.json().')));
 */
export function rawBodyMissingError(fix: string): IntegrationError {
  return new IntegrationError('RAW_BODY_MISSING', `${MESSAGE} ${fix}`);
}

/**
 * The adapters' answer when a body parser consumed the body: `500`,
 * `{"error":{"code":"RAW_BODY_MISSING","message":...}}`, the message ending with `fix`, what to
 * change in that framework. Never echoes the request. Prefer
 * `receiver.refuse(rawBodyMissingError(fix))`, which also logs it.
 *
 * @example
 * sendNodeResponse(res, rawBodyMissingResult('Mount the middleware before express.json().'));
 */
export function rawBodyMissingResult(fix: string): ReceiverResult {
  return errorResponse(rawBodyMissingError(fix));
}
