import { utf8Encoder } from './bytes.js';

/** One signing secret, or several while rotating (any one may match). */
export type Secret = string | readonly string[];

/** What a missing or empty secret's message starts with. */
const REQUIRED = 'A webhook secret is required';

/**
 * The message of a missing or empty secret: it names `CHURN_RISK_WEBHOOK_SECRET`, the variable the
 * guides read the secret from, and ends with `where`, how to set it on the platform (never a
 * value).
 */
export function secretRequired(where: string): string {
  return `${REQUIRED}: set CHURN_RISK_WEBHOOK_SECRET (or the variable you pass as secret) ${where}.`;
}

/** Whether `error` is the `TypeError` of a missing or empty secret (`secretKeys`). */
export function isSecretRequired(error: unknown): boolean {
  return error instanceof TypeError && error.message.startsWith(REQUIRED);
}

/**
 * The `TypeError` of a missing or empty secret, with how to set it where this code runs: on AWS
 * Lambda (its runtime sets `AWS_LAMBDA_FUNCTION_NAME`) in the function's configuration, elsewhere
 * in the process environment. (Cloudflare Workers read it from `env`: `resolveSecret` of
 * `@churn-risk/cloudflare` and the Hono handler name `wrangler secret put`.)
 */
function secretError(): TypeError {
  const env = (globalThis as { process?: { env?: Record<string, unknown> } }).process?.env;
  return new TypeError(
    secretRequired(
      env?.AWS_LAMBDA_FUNCTION_NAME === undefined
        ? "in the process environment (node --env-file=.env, or your host's settings)"
        : "in the function's environment variables (aws lambda update-function-configuration --environment)",
    ),
  );
}

/**
 * The UTF-8 bytes of each secret (no decoding of prefixes). Throws a `TypeError` for a missing or
 * empty secret (or an empty one in the array): that is a configuration mistake, not a bad
 * delivery. Its message names `CHURN_RISK_WEBHOOK_SECRET` and how to set it where the code runs,
 * never a value.
 */
export function secretKeys(secret: Secret): Uint8Array[] {
  const list: readonly unknown[] = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(list) || list.length === 0) throw secretError();
  return list.map((item) => {
    if (typeof item !== 'string' || item.length === 0) throw secretError();
    return utf8Encoder.encode(item);
  });
}
