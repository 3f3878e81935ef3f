import { receiverFailureResult, type ReceiverResult } from '@churn-risk/core/adapter';
import type { NextReceiver } from './types.js';

/**
 * Where a handler gets its receiver: the receiver itself, or a function that returns it, called on
 * each request (`createRouteHandler(churnRisk)`): the receiver is then made at the first request,
 * not when `next build` loads the route, and a failure to make it is answered in JSON.
 */
export type NextReceiverSource = NextReceiver | (() => NextReceiver);

/** How to set the secret, named when making the receiver failed for a missing one. */
const SECRET_FIX =
  "in the deployment's environment variables (on Vercel: Project Settings, Environment " +
  'Variables; locally: .env.local), then redeploy';

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
    return { failed: receiverFailureResult(error, 'route', SECRET_FIX) };
  }
}
