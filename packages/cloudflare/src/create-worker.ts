import {
  createReceiver,
  errorResponse,
  IntegrationError,
  type Receiver,
  type ReceiverOptions,
  type ReceiverResult,
  type Secret,
} from '@churn-risk/core';
import { resolveSecret } from './resolve-secret.js';

/**
 * The part of a Workers `ExecutionContext` the worker uses. The platform's `ctx` fits; so does any
 * object with a `waitUntil` method (in tests).
 */
export interface WorkerExecutionContext {
  /** Keeps the isolate alive until `promise` settles, after the response has been sent. */
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Where the signing secret comes from: a function of the worker's `env` (the usual case: a
 * secret set with `wrangler secret put`), or the secret itself. The function may return a string
 * or an array of strings (rotation); anything else, an empty string included, is "not set".
 */
export type WorkerSecret<Env> = Secret | ((env: Env) => unknown);

/**
 * Options of `createWorker`: `secret` and `setup`, plus the options of `createReceiver` except
 * `concurrency` (see `createWorker`).
 */
export interface CreateWorkerOptions<Env> extends Omit<ReceiverOptions, 'secret' | 'concurrency'> {
  /**
   * The webhook signing secret, usually read from `env`:
   * `secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET`.
   */
  secret: WorkerSecret<Env>;
  /**
   * Registers the handlers, once per isolate, on the receiver built from the first request's `env`
   * (`receiver.on('churn_risk_alert', ...)`). It must register them before it returns.
   */
  setup: (receiver: Receiver, env: Env) => void;
}

/** A Cloudflare Workers module worker: `export default` it from the worker's entry module. */
export interface ChurnRiskWorker<Env> {
  /** Answers one request with the receiver's answer (SPEC section 4's status table). */
  fetch(request: Request, env: Env, ctx: WorkerExecutionContext): Promise<Response>;
}

/**
 * No alert waits for another one's slot: in workerd, work that one request starts for another is
 * cancelled when the first request ends, so each alert runs in the request that accepted it.
 * The isolate's own limit on concurrent requests bounds how many run at once.
 */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** `createReceiver`'s errors describe options, never their values: safe to answer with. */
function buildFailure(error: unknown): IntegrationError {
  if (error instanceof IntegrationError) return error;
  const detail = error instanceof TypeError ? ` ${error.message}` : '';
  return new IntegrationError(
    'INTERNAL_ERROR',
    `The worker could not create its churn-risk receiver.${detail}`,
    { cause: error },
  );
}

function toResponse(result: ReceiverResult): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}

function checkOptions(options: CreateWorkerOptions<never>): void {
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new TypeError('createWorker needs an options object: { secret, setup }.');
  }
  if (typeof options.setup !== 'function') {
    throw new TypeError('createWorker needs setup: (receiver, env) => { receiver.on(...) }.');
  }
  const { secret } = options as { secret: unknown };
  if (typeof secret !== 'function' && typeof secret !== 'string' && !Array.isArray(secret)) {
    throw new TypeError(
      'createWorker needs secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET (or the secret itself).',
    );
  }
}

/**
 * Creates a Cloudflare Workers module worker that receives churn-risk webhook alerts. The
 * receiver (`createReceiver` from `@churn-risk/core`) is built once per isolate, from the first
 * request's `env`, and `setup` registers its handlers; later requests reuse it. Every accepted
 * alert is handed to `ctx.waitUntil` before it is accepted, so the isolate stays alive until its
 * handlers have run. A secret that is not set answers `500 INTERNAL_ERROR` (naming the `env`
 * binding it read, never a value), accepts nothing, and the next request tries again. Runs in
 * `workerd` without `nodejs_compat`. Each alert runs in the request that accepted it (workerd
 * cancels work one request starts for another), so `concurrency` is not an option here: the
 * isolate's limit on concurrent requests bounds the alerts processed at once.
 *
 * @example
 * export default createWorker({
 *   secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
 *   setup: (receiver, env) => {
 *     receiver.on('churn_risk_alert', async (alert) => console.log(alert.userId, alert.tier));
 *   },
 * });
 */
export function createWorker<Env = Record<string, unknown>>(
  options: CreateWorkerOptions<Env>,
): ChurnRiskWorker<Env> {
  checkOptions(options);
  const {
    secret,
    setup,
    concurrency: _ignored,
    ...receiverOptions
  } = options as CreateWorkerOptions<Env> & {
    concurrency?: unknown;
  };
  const log = options.logger;
  let receiver: Receiver | undefined;

  /** The isolate's receiver; built at the first call that succeeds (a failure is not kept). */
  const receiverFor = (env: Env): Receiver => {
    if (receiver !== undefined) return receiver;
    const built = createReceiver({
      ...receiverOptions,
      concurrency: UNBOUNDED,
      secret: resolveSecret(secret, env),
    });
    setup(built, env);
    receiver = built;
    return built;
  };

  const refuse = (error: unknown): Response => {
    const failure = buildFailure(error);
    // Written like the receiver's own 5xx lines (SPEC 14); `err` only for the user's own code.
    const fields = failure === error ? { code: failure.code } : { code: failure.code, err: error };
    if (log === undefined) console.error(failure.message, fields);
    else log.error(fields, failure.message);
    return toResponse(errorResponse(failure));
  };

  return {
    async fetch(request, env, ctx) {
      let current: Receiver;
      try {
        current = receiverFor(env);
      } catch (error) {
        return refuse(error);
      }
      // Bound: an unbound `ctx.waitUntil` throws "Illegal invocation" in workerd.
      return current.fetch(request, {
        waitUntil: (promise) => {
          ctx.waitUntil(promise);
        },
      });
    },
  };
}
