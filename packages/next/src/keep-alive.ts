import { after } from 'next/server.js';
import type { WaitUntil } from './types.js';

/**
 * Keeps `done` (the alert's processing) alive after the answer: through Next's `after()` inside a
 * Next request, else through the injected `waitUntil`, else in-process.
 *
 * Whatever `after()` throws (outside a request scope, or a platform without `waitUntil`), the
 * alert has already been accepted and queued, so the answer must stay 202: the work falls back to
 * `waitUntil`, or runs in-process, where `receiver.drain()` tracks it.
 */
export function keepAlive(done: Promise<unknown>, waitUntil: WaitUntil | undefined): void {
  // Outside a request scope `after()` throws on every call, and capturing the stack of that
  // Error costs about as much as the rest of the receiver's work per delivery (CPU profile of the
  // route handler called from node:http). The error is never shown, so it is made without one.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    after(done);
    return;
  } catch {
    // Fall through: see above.
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
  waitUntil?.(done);
}
