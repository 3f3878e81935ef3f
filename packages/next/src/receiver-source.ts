import { IntegrationError } from '@churn-risk/core';
import { errorResponse, type ReceiverResult } from '@churn-risk/core/adapter';
import type { NextReceiver } from './types.js';

/**
 * Where a handler gets its receiver: the receiver itself, or a function that returns it, called on
 * each request (`createRouteHandler(churnRisk)`): the receiver is then made at the first request,
 * not when `next build` loads the route, and a failure to make it is answered in JSON.
 */
export type NextReceiverSource = NextReceiver | (() => NextReceiver);

/** How to set the secret, named when making the receiver failed for it. */
const SECRET_FIX =
  ' Set the environment variable your code reads the secret from (CHURN_RISK_WEBHOOK_SECRET in ' +
  'the guides) in the deployment environment (on Vercel: Project Settings, Environment ' +
  'Variables; locally: .env.local), then redeploy.';

/**
 * The failure of a receiver function as the handler answers and logs it: an `IntegrationError` as
 * it is, a `TypeError` (what `createReceiver` throws for a missing secret or a bad option: it
 * describes options, never their values) with its message and, for the secret, how to set it;
 * anything else (the app's own code) without its message.
 */
function receiverFailure(error: unknown): IntegrationError {
  if (error instanceof IntegrationError) return error;
  const detail = error instanceof TypeError ? ` ${error.message}` : '';
  const fix = /secret/i.test(detail) ? SECRET_FIX : '';
  return new IntegrationError(
    'INTERNAL_ERROR',
    `The route could not create its churn-risk receiver.${detail}${fix}`,
    { cause: error },
  );
}

/**
 * The receiver of `source` for this request, or the answer (`500 INTERNAL_ERROR`, logged with
 * `console.error`) when the function threw.
 */
export function receiverOf(
  source: NextReceiverSource,
): { receiver: NextReceiver } | { failed: ReceiverResult } {
  if (typeof source !== 'function') return { receiver: source };
  try {
    return { receiver: source() };
  } catch (error) {
    const failure = receiverFailure(error);
    const fields = failure === error ? { code: failure.code } : { code: failure.code, err: error };
    console.error(failure.message, fields);
    return { failed: errorResponse(failure) };
  }
}
