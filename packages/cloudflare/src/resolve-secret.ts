import { IntegrationError, type Secret } from '@churn-risk/core';

/** A string that is not empty, or a non-empty array of them. */
function isSecret(value: unknown): value is Secret {
  if (typeof value === 'string') return value.length > 0;
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === 'string' && item.length > 0)
  );
}

/**
 * Calls `read(env)` on a view of `env` that records the names it reads (never their values), so
 * that an error can say which binding is not set.
 */
function readTracked<Env>(
  read: (env: Env) => unknown,
  env: Env,
): { value: unknown; names: string[] } {
  const names: string[] = [];
  const target = typeof env === 'object' && env !== null ? env : {};
  const view = new Proxy(target, {
    get(object, key) {
      if (typeof key === 'string' && !names.includes(key)) names.push(key);
      return Reflect.get(object, key) as unknown;
    },
  });
  return { value: read(view as Env), names };
}

function notSet(names: readonly string[]): IntegrationError {
  // The one binding read, else the variable the guides read the secret from.
  const binding = names.length === 1 ? names[0] : 'CHURN_RISK_WEBHOOK_SECRET';
  const read = names.length > 0 ? ` (it read ${names.map((n) => `env.${n}`).join(', ')})` : '';
  return new IntegrationError(
    'INTERNAL_ERROR',
    `The webhook secret is not set: secret(env) returned no non-empty string${read}. Set it ` +
      `with npx wrangler secret put ${binding} (or in .dev.vars locally); until then the sender ` +
      'retries each delivery.',
  );
}

/**
 * The secret for this `env`: `source` itself, or what `source(env)` returns (a non-empty string,
 * or a non-empty array of them while rotating). When there is none, throws an `IntegrationError`
 * (code `INTERNAL_ERROR`, answered `500` so that the sender redelivers) whose message names the
 * bindings `source` read and `npx wrangler secret put` with the binding it read (`CHURN_RISK_WEBHOOK_SECRET`
 * when it read none or several), never a value. `createWorker` and
 * `createQueueWorker` call it; call it yourself where you build the receiver from `env`, as in a
 * Hono app: `createHandler` of `@churn-risk/hono` answers the error as JSON and logs it.
 *
 * @example
 * const secret = resolveSecret((env: Env) => env.CHURN_RISK_WEBHOOK_SECRET, c.env);
 */
export function resolveSecret<Env>(source: Secret | ((env: Env) => unknown), env: Env): Secret {
  if (typeof source !== 'function') {
    if (isSecret(source)) return source;
    throw notSet([]);
  }
  const { value, names } = readTracked(source, env);
  if (isSecret(value)) return value;
  throw notSet(names);
}
