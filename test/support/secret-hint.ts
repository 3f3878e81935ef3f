import { expect } from 'vitest';

/** A secret that a test puts next to an empty one: the error must never show it. */
export const KEPT_SECRET = 'whsec_kept_4f1c9a';

/**
 * What a receiver is made with when the variable its code reads is unset or empty: `undefined`
 * (`process.env.CHURN_RISK_WEBHOOK_SECRET!` unset), `''` (set to nothing), and while rotating an
 * array whose second secret is unset or empty next to a real one.
 */
export const UNSET_SECRETS: readonly (readonly [string, unknown])[] = [
  ['missing', undefined],
  ['empty', ''],
  ['an array with a missing one', [KEPT_SECRET, undefined]],
  ['an array with an empty one', [KEPT_SECRET, '']],
];

/** How the error tells to set the secret in a Node process (Express, Fastify, Koa, node:http). */
export const NODE_HINT = [
  'CHURN_RISK_WEBHOOK_SECRET',
  'in the process environment',
  'node --env-file=.env',
] as const;

/** How it tells to set it on AWS Lambda (where the runtime sets `AWS_LAMBDA_FUNCTION_NAME`). */
export const LAMBDA_HINT = [
  'CHURN_RISK_WEBHOOK_SECRET',
  "in the function's environment variables",
  'aws lambda update-function-configuration --environment',
] as const;

/**
 * The `TypeError` `make` throws at creation (a receiver made with an unset secret), checked: it
 * says a webhook secret is required, holds every piece of `hint` (the variable and how to set it),
 * and no secret-like value (neither `KEPT_SECRET` nor anything shaped `whsec_...`).
 */
export function expectSecretError(make: () => unknown, hint: readonly string[]): TypeError {
  let thrown: unknown;
  try {
    make();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(TypeError);
  const { message } = thrown as TypeError;
  expect(message).toMatch(/^A webhook secret is required: set CHURN_RISK_WEBHOOK_SECRET/);
  for (const piece of hint) expect(message).toContain(piece);
  expect(message).not.toContain(KEPT_SECRET);
  expect(message).not.toMatch(/whsec_/);
  return thrown as TypeError;
}
