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
   * The bearer token the cron job sends (`Authorization: Bearer <cronSecret>`): at least 16
   * visible ASCII characters. Default `process.env.CRON_SECRET`, which Vercel Cron sends, read at
   * each request (so `next build` needs none); a request without it, or with another one, is
   * answered `401`.
   */
  cronSecret?: string;
}

/** The receiver a sweep route needs. */
export type SweepReceiver = Pick<Receiver, 'sweep'>;

const DEFAULT_BUDGET_MS = 50_000;
/** The options `createSweepHandler` knows: any other key is a `TypeError`. */
const OPTION_KEYS = [
  'budgetMs',
  'cronSecret',
] as const satisfies readonly (keyof SweepHandlerOptions)[];
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

/** The shortest cron secret accepted: a bearer shorter than this is guessable. */
const MIN_SECRET_LENGTH = 16;

/** Why `secret` cannot be the cron secret, without ever quoting it; `undefined` when it can. */
function secretProblem(secret: string, name: string): string | undefined {
  if (secret.length < MIN_SECRET_LENGTH) {
    return (
      `${name} is too short: ${String(secret.length)} characters, at least ` +
      `${String(MIN_SECRET_LENGTH)} are needed (visible ASCII; e.g. \`openssl rand -hex 32\`).`
    );
  }
  if (!/^[\x21-\x7e]+$/.test(secret)) {
    return `${name} may hold only visible ASCII characters (no spaces): a bearer cannot carry others.`;
  }
  return undefined;
}

/** The secret as `process.env.CRON_SECRET` holds it at this request. */
function secretFromEnv(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  const secret = env?.CRON_SECRET;
  return secret === '' ? undefined : secret;
}

/** What a sweep route answers, and logs, when `CRON_SECRET` is missing or unusable. */
function misconfigured(code: string, message: string): Response {
  console.error(`[churn-risk] The sweep route cannot authorize cron calls: ${message}`);
  return json(500, { error: { code, message } });
}

/**
 * Creates the App Router route (`app/api/churn-risk/sweep/route.ts`) that a cron job calls to run
 * a durable queue's due alerts where no worker process runs: retries whose delay passed, alerts a
 * stopped function left. It answers `401` unless the request carries `Authorization: Bearer
 * <CRON_SECRET>` (compared in constant time; the secret is never logged or echoed), `200` with
 * the result of one `receiver.sweep({ budgetMs })` as JSON, and `503` with the store's error
 * (never a password) when the store does not answer.
 *
 * `cronSecret` is checked here (a `TypeError` when it is too short); without it,
 * `process.env.CRON_SECRET` is read at each request, and a missing or too short one answers `500`
 * with `CRON_SECRET_MISSING` or `CRON_SECRET_INVALID` and logs why (its length, never its value).
 * An unknown option is a `TypeError`; the former `secret` is refused naming `cronSecret`.
 *
 * @example
 * // app/api/churn-risk/sweep/route.ts, with vercel.json: { "crons": [{ "path": "/api/churn-risk/sweep", "schedule": "* * * * *" }] }
 * import { connection } from 'next/server';
 * import { churnRisk } from '../../../../lib/churn-risk';
 * export const maxDuration = 60;
 * export async function GET(request: Request): Promise<Response> {
 *   await connection(); // rendered at request time: the receiver needs the run-time env
 *   return createSweepHandler(churnRisk(), { budgetMs: 55_000 })(request);
 * }
 */
export function createSweepHandler(
  receiver: SweepReceiver,
  options: SweepHandlerOptions = {},
): RouteHandler {
  refuseUnknownOptions('createSweepHandler', options, OPTION_KEYS, {
    secret: 'it is called cronSecret',
  });
  const budgetMs = options.budgetMs ?? DEFAULT_BUDGET_MS;
  if (!Number.isInteger(budgetMs) || budgetMs < 1_000) {
    throw new TypeError('budgetMs must be a whole number of milliseconds of at least 1000.');
  }
  const { cronSecret } = options;
  if (cronSecret !== undefined) {
    const problem =
      typeof cronSecret === 'string'
        ? secretProblem(cronSecret, 'createSweepHandler: cronSecret')
        : 'createSweepHandler: cronSecret must be a string.';
    if (problem !== undefined) throw new TypeError(problem);
  }
  return async (request) => {
    const secret = cronSecret ?? secretFromEnv();
    if (secret === undefined) {
      return misconfigured(
        'CRON_SECRET_MISSING',
        'CRON_SECRET is not set: set it to at least 16 visible ASCII characters (Vercel Cron ' +
          'sends it as Authorization: Bearer <CRON_SECRET>), or pass { cronSecret }.',
      );
    }
    const problem = cronSecret === undefined ? secretProblem(secret, 'CRON_SECRET') : undefined;
    if (problem !== undefined) return misconfigured('CRON_SECRET_INVALID', problem);
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
