import { type Receiver } from '@churn-risk/core';
import { refuseUnknownOptions } from '@churn-risk/core/store';

/** The part of a churn-risk receiver the Next.js handlers use: any `createReceiver(...)` result fits. */
export type NextReceiver = Pick<Receiver, 'fetch' | 'handle' | 'maxBodyBytes'> &
  Partial<Pick<Receiver, 'refuse' | 'bodyTimeoutMs'>>;

/** Hands a promise to the platform so that it keeps the function alive until it settles. */
export type WaitUntil = (promise: Promise<unknown>) => void;

/** Options of `createRouteHandler` and `createPagesHandler`. */
export interface NextHandlerOptions {
  /**
   * Keeps post-response work alive where Next's `after()` is not available: outside a Next request
   * scope (App Router) and in every Pages Router API route. On Vercel, pass `waitUntil` from
   * `@vercel/functions`.
   */
  waitUntil?: WaitUntil;
}

/** The options the Next.js handlers know: any other key is a `TypeError`. */
const OPTION_KEYS = ['waitUntil'] as const satisfies readonly (keyof NextHandlerOptions)[];

/** Refuses an options key `where` does not know, naming the closest known one. */
export function checkHandlerOptions(where: string, options: NextHandlerOptions): void {
  refuseUnknownOptions(where, options, OPTION_KEYS);
}
