import { IntegrationError, isIntegrationError } from '../errors/integration-error.js';
import { isSecretRequired, secretRequired } from '../signature/secrets.js';
import { errorResponse } from './responses.js';
import type { ReceiverResult } from './types.js';

/**
 * The answer of a handler whose receiver is made at the request (by a function the app passes,
 * such as `createHandler((c) => receiverFor(c.env))` of `@churn-risk/hono`) when that function
 * threw: `500` `{"error":{"code":"INTERNAL_ERROR","message":...}}`, the message logged with
 * `console.error` as the receiver logs its own 5xx. The message says that the `handler` could not
 * create its receiver, then:
 *
 * - for an `IntegrationError` (`resolveSecret` of `@churn-risk/cloudflare` names the unset
 *   binding and `wrangler secret put`): its own message, in place of all of this;
 * - for the `TypeError` of a missing or empty secret: that a secret is required, naming
 *   `CHURN_RISK_WEBHOOK_SECRET`, and `secretFix`, how to set it on this platform
 *   (`"in the deployment's environment variables (on Vercel: ...)"`);
 * - for another `TypeError` (a bad option: its message describes options, never their values):
 *   its message;
 * - for anything else (the app's own code): nothing more.
 *
 * It never holds a value of the secret.
 *
 * @example
 * try {
 *   receiver ??= make(c);
 * } catch (error) {
 *   return receiverFailureResult(error, 'handler', 'in the process environment');
 * }
 */
export function receiverFailureResult(
  error: unknown,
  handler: string,
  secretFix: string,
): ReceiverResult {
  let failure: IntegrationError;
  if (isIntegrationError(error)) failure = error;
  else {
    const detail = !(error instanceof TypeError)
      ? ''
      : ` ${isSecretRequired(error) ? secretRequired(secretFix) : error.message}`;
    failure = new IntegrationError(
      'INTERNAL_ERROR',
      `The ${handler} could not create its churn-risk receiver.${detail}`,
      { cause: error },
    );
  }
  const fields = failure === error ? { code: failure.code } : { code: failure.code, err: error };
  console.error(failure.message, fields);
  return errorResponse(failure);
}
