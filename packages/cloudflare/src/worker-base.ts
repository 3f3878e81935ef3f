import {
  IntegrationError,
  type Receiver,
  type ReceiverOptions,
  type Secret,
} from '@churn-risk/core';
import { RENAMED_OPTIONS, refuseUnknownOptions } from '@churn-risk/core/store';
import { errorResponse, type ReceiverResult } from '@churn-risk/core/adapter';
import { resolveSecret } from './resolve-secret.js';

// What both workers share (`createWorker` in memory, `createQueueWorker` in queue mode): the
// options' checks, the isolate's receiver built from the first `env`, and the fetch path. Neither
// mode's own code is here, so that a worker bundles only the mode it uses.

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
 * The options both workers take: `secret` and `setup`, plus the options of `createReceiver`
 * except `concurrency` (each alert runs in the request that accepted it), `queue`, `dedupe` (each
 * worker takes its own, as functions of `env`) and `dedupeTtlMs` (each worker says where it applies).
 */
export interface WorkerBaseOptions<Env> extends Omit<
  ReceiverOptions,
  'secret' | 'concurrency' | 'queue' | 'dedupe' | 'dedupeTtlMs'
> {
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
  /** Answers one request with the receiver's answer (the same statuses as every adapter). */
  fetch(request: Request, env: Env, ctx: WorkerExecutionContext): Promise<Response>;
}

/** The options of `createReceiver` both workers pass through (`BASE_KEYS` adds `secret`, `setup`). */
export const BASE_KEYS = [
  'secret',
  'setup',
  'tolerance',
  'signedContent',
  'signatureHeader',
  'timestampHeader',
  'maxBodyBytes',
  'bodyTimeoutMs',
  'mode',
  'order',
  'maxQueue',
  'retries',
  'consume',
  'keepAliveBudgetMs',
  'logger',
  'tracer',
  'now',
] as const satisfies readonly (keyof WorkerBaseOptions<unknown>)[];

/**
 * `BASE_KEYS` followed by a worker's own keys. A call (marked pure where used), not an array
 * spread, so that a bundle of the other worker drops the list.
 */
export function withBaseKeys<const Keys extends readonly string[]>(
  keys: Keys,
): readonly [...typeof BASE_KEYS, ...Keys] {
  return [...BASE_KEYS, ...keys];
}

/** Hints for keys that are not options of either worker but are easily taken for one. */
export const NOT_OPTIONS = {
  ...RENAMED_OPTIONS,
  concurrency: 'each alert runs in the request that accepted it',
  onError: 'onError is a method: call receiver.onError(fn) in setup',
};

/**
 * No alert waits for another one's slot: in workerd, work that one request starts for another is
 * cancelled when the first request ends, so each alert runs in the request that accepted it.
 * The isolate's own limit on concurrent requests bounds how many run at once.
 */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/**
 * Checks what both workers need, after refusing keys outside `known`: an options object, `setup`
 * and `secret`. `name` is the function the messages name.
 */
export function checkBaseOptions(
  name: string,
  options: unknown,
  known: readonly string[],
  hints: Readonly<Record<string, string>>,
): asserts options is Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${name} needs an options object: { secret, setup }.`);
  }
  refuseUnknownOptions(name, options, known, hints);
  const { secret, setup } = options as Record<string, unknown>;
  if (typeof setup !== 'function') {
    throw new TypeError(`${name} needs setup: (receiver, env) => { receiver.on(...) }.`);
  }
  if (typeof secret !== 'function' && typeof secret !== 'string' && !Array.isArray(secret)) {
    throw new TypeError(
      `${name} needs secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET (or the secret itself).`,
    );
  }
}

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

/** One isolate's worker: its receiver and mode, built once from the first `env` that works. */
export interface IsolateWorker<Env, Mode> {
  /** The receiver and the mode's state, built at the first call that succeeds (a failure is not kept). */
  build(env: Env): { receiver: Receiver; mode: Mode };
  /** Logs a build failure as the receiver logs its own 5xx and returns the typed error. */
  report(error: unknown): IntegrationError;
  /** The worker's `fetch`: the receiver's answer, alerts kept alive by `ctx.waitUntil`. */
  fetch: ChurnRiskWorker<Env>['fetch'];
}

/**
 * The part both workers share. `modeFor(env)` gives the receiver options of the mode (in memory:
 * the budget and dedupe; queue mode: the push queue) and the mode's own state (queue mode's
 * consumer), built with the receiver by `create`, once per isolate. `create` is
 * `createReceiver` in memory mode and `createQueueReceiver` in queue mode, so that a queue-mode
 * worker's bundle holds no in-memory queue.
 */
export function createIsolateWorker<Env, Mode, ModeOptions extends Partial<ReceiverOptions>>(
  options: WorkerBaseOptions<Env>,
  receiverOptions: Omit<ReceiverOptions, 'secret'>,
  modeFor: (env: Env) => { options: ModeOptions; mode: Mode },
  create: (options: ReceiverOptions & ModeOptions) => Receiver,
): IsolateWorker<Env, Mode> {
  const { secret, setup, logger: log } = options;
  let built: { receiver: Receiver; mode: Mode } | undefined;

  const build = (env: Env): { receiver: Receiver; mode: Mode } => {
    if (built !== undefined) return built;
    const { options: modeOptions, mode } = modeFor(env);
    const receiver = create({
      ...receiverOptions,
      ...modeOptions,
      concurrency: UNBOUNDED,
      secret: resolveSecret(secret, env),
    });
    setup(receiver, env);
    return (built = { receiver, mode });
  };

  const report = (error: unknown): IntegrationError => {
    const failure = buildFailure(error);
    // Written like the receiver's own 5xx lines; `err` only for the user's own code.
    const fields = failure === error ? { code: failure.code } : { code: failure.code, err: error };
    if (log === undefined) console.error(failure.message, fields);
    else log.error(fields, failure.message);
    return failure;
  };

  return {
    build,
    report,
    async fetch(request, env, ctx) {
      let receiver: Receiver;
      try {
        ({ receiver } = build(env));
      } catch (error) {
        return toResponse(errorResponse(report(error)));
      }
      // Bound: an unbound `ctx.waitUntil` throws "Illegal invocation" in workerd.
      return receiver.fetch(request, {
        waitUntil: (promise) => {
          ctx.waitUntil(promise);
        },
      });
    },
  };
}
