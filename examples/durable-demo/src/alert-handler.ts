import type { AlertContext, ChurnRiskAlert } from '@churn-risk/core';
import { setTimeout as delay } from 'node:timers/promises';
import type { IdempotentStore } from './idempotent-store.js';

/** Options of `createAlertHandler`. */
export interface AlertHandlerOptions {
  /** Where follow-up tasks go, keyed by alert identity. */
  store: IdempotentStore;
  /** Pretend the work (a CRM call, an e-mail) takes up to this many milliseconds. */
  workMs?: number;
  /** Where progress lines go (the demo counts them). Default `console.log`. */
  log?: (line: string) => void;
}

/**
 * The worker's handler: opens a follow-up task for the account team, once per alert.
 *
 * The idempotency pattern: a handler may run again for the same alert (a worker that died
 * mid-alert loses its lock, and another worker takes the alert over), so its side effect is keyed
 * by the alert identity `context.id`. A run that finds the key already written does nothing.
 */
export function createAlertHandler(
  options: AlertHandlerOptions,
): (alert: ChurnRiskAlert, context: AlertContext) => Promise<void> {
  const { store, workMs = 0 } = options;
  const log =
    options.log ??
    ((line: string) => {
      console.log(line);
    });
  return async (alert, context) => {
    log(`handling ${context.id}`);
    if (store.has(context.id)) {
      log(`already handled ${context.id} (nothing to do)`);
      return;
    }
    if (workMs > 0) await delay(Math.round(workMs * (0.5 + Math.random() / 2)));
    const written = await store.addOnce({
      id: context.id,
      userId: alert.userId,
      score: alert.score,
      tier: alert.tier,
      task: alert.recommendation,
      handledAt: new Date().toISOString(),
      pid: process.pid,
    });
    log(written ? `handled ${context.id}` : `already handled ${context.id} (nothing to do)`);
  };
}
