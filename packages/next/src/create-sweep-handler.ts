import { type Receiver, type SweepResult } from '@churn-risk/core';
import { refuseUnknownOptions } from '@churn-risk/core/store';
import type { RouteHandler } from './create-route-handler.js';

/** Options of `createSweepHandler`. */
export interface SweepHandlerOptions {
  /**
   * How long one sweep may run, in ms (at least 1,000): set it a little under the route's
   * `maxDuration` (the sweep takes nothing in the last fifth of it). Default 50,000.
   */
  budgetMs?: number;
  /**
   * The bearer token the cron job sends (`Authorization: Bearer <secret>`). Default
   * `process.env.CRON_SECRET`, which Vercel Cron sends; a request without it, or with another
   * one, is answered `401`.
   */
  secret?: string;
}

/** The receiver a sweep route needs. */
export type SweepReceiver = Pick<Receiver, 'sweep'>;

const DEFAULT_BUDGET_MS = 50_000;
const encoder = new TextEncoder();

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
}

/** SHA-256 of `text`: both sides are compared at one length, so the length leaks nothing. */
async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

/** Whether `header` is `Bearer <secret>`, compared in constant time. */
async function authorized(header: string | null, secret: string): Promise<boolean> {
  const match = header === null ? null : /^Bearer ([\x21-\x7e]+)$/.exec(header);
  const given = await digest(match?.[1] ?? '');
  const expected = await digest(secret);
  let difference = match === null ? 1 : 0;
  for (let i = 0; i < expected.length; i++) difference |= (given[i] ?? 0) ^ (expected[i] ?? 0);
  return difference === 0;
}

function secretOf(options: SweepHandlerOptions): string {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  const secret = options.secret ?? env?.CRON_SECRET;
  if (typeof secret !== 'string' || secret.length < 16 || !/^[\x21-\x7e]+$/.test(secret)) {
    throw new TypeError(
      'createSweepHandler needs the cron secret: set CRON_SECRET (at least 16 visible ASCII ' +
        'characters; Vercel Cron sends it as Authorization: Bearer <CRON_SECRET>) or pass { secret }.',
    );
  }
  return secret;
}

/**
 * Creates the App Router route (`app/api/churn-risk/sweep/route.ts`) that a cron job calls to run
 * a durable queue's due alerts where no worker process runs: retries whose delay passed,
 * alerts a stopped function left. It answers `401` unless the request carries `Authorization:
 * Bearer <CRON_SECRET>` (compared in constant time; the secret is never logged or echoed), `200`
 * with `{ completed, retried, failed, left }` after one `receiver.sweep({ budgetMs })`, and `503`
 * with the store's error (never a password) when the store does not answer.
 *
 * @example
 * // app/api/churn-risk/sweep/route.ts, with vercel.json: { "crons": [{ "path": "/api/churn-risk/sweep", "schedule": "* * * * *" }] }
 * import { receiver } from '../../../../lib/churn-risk';
 * export const maxDuration = 60;
 * export const GET = createSweepHandler(receiver, { budgetMs: 55_000 });
 */
export function createSweepHandler(
  receiver: SweepReceiver,
  options: SweepHandlerOptions = {},
): RouteHandler {
  refuseUnknownOptions('createSweepHandler', options, ['budgetMs', 'secret']);
  const budgetMs = options.budgetMs ?? DEFAULT_BUDGET_MS;
  if (!Number.isInteger(budgetMs) || budgetMs < 1_000) {
    throw new TypeError('budgetMs must be a whole number of milliseconds of at least 1000.');
  }
  const secret = secretOf(options);
  return async (request) => {
    if (!(await authorized(request.headers.get('authorization'), secret))) {
      return json(
        401,
        {
          error: {
            code: 'UNAUTHORIZED',
            message: 'A sweep needs Authorization: Bearer <CRON_SECRET>.',
          },
        },
        { 'www-authenticate': 'Bearer' },
      );
    }
    let result: SweepResult;
    try {
      result = await receiver.sweep({ budgetMs });
    } catch (error) {
      if (error instanceof TypeError) throw error; // the receiver has no durable queue: a bug
      const message = error instanceof Error ? error.message : 'The queue store failed.';
      return json(503, { error: { code: 'STORE_UNAVAILABLE', message } }, { 'retry-after': '60' });
    }
    return json(200, result);
  };
}
