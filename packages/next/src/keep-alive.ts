import { after } from 'next/server.js';
import type { WaitUntil } from './types.js';

/** True for the error Next's `after()` throws when it is called outside a request scope. */
function isOutsideRequestScope(error: unknown): boolean {
  return error instanceof Error && /outside a request scope/i.test(error.message);
}

/**
 * Keeps `done` (the alert's processing) alive after the answer: through Next's `after()` inside a
 * Next request, else through the injected `waitUntil`, else in-process.
 */
export function keepAlive(done: Promise<unknown>, waitUntil: WaitUntil | undefined): void {
  try {
    after(done);
    return;
  } catch (error) {
    if (!isOutsideRequestScope(error)) throw error;
  }
  waitUntil?.(done);
}
