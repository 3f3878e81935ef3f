import { type Receiver, type SweepResult } from '@churn-risk/core';
import { refuseUnknownOptions } from '@churn-risk/core/store';

/** Options of `createSweepHandler`. */
export interface LambdaSweepOptions {
  /**
   * How long one sweep may run, in ms (at least 1,000). Default: the invocation's remaining time
   * (`context.getRemainingTimeInMillis()`) less a margin of a tenth of it, at least 2 s.
   */
  budgetMs?: number;
}

/** The part of the Lambda context the sweep reads. */
export interface LambdaSweepContext {
  /** Milliseconds left before Lambda ends the invocation. */
  getRemainingTimeInMillis(): number;
}

/** A scheduled Lambda handler: `(event, context) => Promise<SweepResult>`. */
export type LambdaSweepHandler = (
  event: unknown,
  context?: LambdaSweepContext,
) => Promise<SweepResult>;

const MIN_BUDGET_MS = 1_000;
const FALLBACK_BUDGET_MS = 50_000;

function checkBudget(budgetMs: number): number {
  if (!Number.isInteger(budgetMs) || budgetMs < MIN_BUDGET_MS) {
    throw new TypeError(
      `budgetMs must be a whole number of milliseconds of at least ${String(MIN_BUDGET_MS)}.`,
    );
  }
  return budgetMs;
}

/**
 * A Lambda handler for an EventBridge Scheduler (or any scheduled) event that runs a durable
 * queue's due alerts where no worker process runs: `receiver.sweep({ budgetMs })` puts
 * back the alerts of invocations that died, then runs retries whose delay passed, within the
 * invocation's remaining time less a margin. Resolves with `{ completed, retried, failed, left }`;
 * rejects (the invocation fails, the scheduler retries it) naming the store when it does not
 * answer.
 *
 * @example
 * const receiver = createReceiver({ secret, queue: createPostgresQueue({ connection }), consume: false });
 * receiver.on('churn_risk_alert', handler, { id: 'crm' });
 * export const sweep = createSweepHandler(receiver); // schedule: rate(1 minute)
 */
export function createSweepHandler(
  receiver: Pick<Receiver, 'sweep'>,
  options: LambdaSweepOptions = {},
): LambdaSweepHandler {
  refuseUnknownOptions('createSweepHandler', options, ['budgetMs']);
  const fixed = options.budgetMs === undefined ? undefined : checkBudget(options.budgetMs);
  return (_event, context) => {
    let budgetMs = fixed;
    if (budgetMs === undefined) {
      const remaining = context?.getRemainingTimeInMillis() ?? FALLBACK_BUDGET_MS;
      budgetMs = Math.floor(remaining - Math.max(2_000, remaining / 10));
    }
    if (budgetMs < MIN_BUDGET_MS) {
      return Promise.reject(
        new TypeError(
          `The invocation has too little time left for a sweep (${String(budgetMs)} ms of budget): ` +
            'raise the function timeout.',
        ),
      );
    }
    return receiver.sweep({ budgetMs });
  };
}
