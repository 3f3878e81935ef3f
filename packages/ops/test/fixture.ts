import { createReceiver, type ChurnRiskAlert, type Receiver } from '@churn-risk/core';
import { type AlertQueue } from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';

// A receiver with two handlers over a real queue, for the operations page's tests: `audit` always
// succeeds; `crm` fails while `broken` is set. Every alert fails after its one try, with `audit`
// recorded as succeeded, so a retry from the page must run `crm` alone.

export const SECRET = 'whsec_ops_tests_8f2a';

let sequence = 0;

/** A fresh alert (its own identity), with `overrides`. */
export function makeAlert(overrides: Partial<ChurnRiskAlert> = {}): Partial<ChurnRiskAlert> {
  sequence += 1;
  return {
    userId: `user_${String(process.pid)}_${String(sequence)}`,
    triggeredAt: new Date(Date.UTC(2026, 10, 1) + sequence * 1000).toISOString(),
    recommendation: 'Call them.',
    ...overrides,
  };
}

/** A receiver whose `crm` handler fails while `broken`, and the runs of each handler by user. */
export interface FailingReceiver {
  receiver: Receiver;
  runs: { audit: string[]; crm: string[] };
  broken: boolean;
  /** Delivers `alert` (signed) and checks that it was accepted. */
  deliver(alert: Partial<ChurnRiskAlert>): Promise<void>;
}

/**
 * A `FailingReceiver` on `queue`: one try per alert (no retries), so it fails at once. With
 * `consume: 'invocation'` no worker runs: each delivery's sweep does (as on a function platform).
 */
export function failingReceiver(
  queue: AlertQueue,
  consume: boolean | 'invocation' = true,
): FailingReceiver {
  const quiet = (): void => undefined;
  const logger = { debug: quiet, info: quiet, warn: quiet, error: quiet };
  const receiver = createReceiver({
    secret: SECRET,
    queue,
    retries: 0,
    consume,
    logger,
    ...(consume === 'invocation' ? { keepAliveBudgetMs: 5_000 } : {}),
  });
  const state: FailingReceiver = {
    receiver,
    runs: { audit: [], crm: [] },
    broken: true,
    async deliver(alert) {
      const { headers, body } = createTestDelivery(alert, { secret: SECRET });
      const result = await receiver.handle({ method: 'POST', headers, body });
      if (result.status !== 202) throw new Error(`delivery answered ${String(result.status)}`);
    },
  };
  receiver.on(
    'churn_risk_alert',
    (alert) => {
      state.runs.audit.push(alert.userId);
    },
    { id: 'audit' },
  );
  receiver.on(
    'churn_risk_alert',
    (alert) => {
      state.runs.crm.push(alert.userId);
      if (state.broken) throw new Error(`crm is down for ${alert.userId}`);
    },
    { id: 'crm' },
  );
  return state;
}

/** Resolves once `check()` is true (asked every 50 ms); rejects after `timeoutMs`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 15_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`not true within ${String(timeoutMs)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
