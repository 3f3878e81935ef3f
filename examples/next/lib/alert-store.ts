import type { ChurnRiskAlert } from '@churn-risk/core';

/** An alert as the example records it. */
export interface ReceivedAlert {
  id: string;
  route: string;
  receivedAt: string;
  alert: ChurnRiskAlert;
}

const STORE_KEY = Symbol.for('churn-risk.example-next.alerts');

/**
 * The in-memory list of received alerts. Kept on `globalThis` because Next bundles each route on its
 * own: a module-level array would not be shared between the routes and the page. One list per
 * runtime (the edge runtime has its own globals). A real app writes to its database instead.
 */
function store(): ReceivedAlert[] {
  const holder = globalThis as typeof globalThis & Record<symbol, ReceivedAlert[] | undefined>;
  holder[STORE_KEY] ??= [];
  return holder[STORE_KEY];
}

/** Records an alert (newest first). */
export function recordAlert(entry: ReceivedAlert): void {
  store().unshift(entry);
}

/** The alerts received so far, newest first. */
export function listAlerts(): readonly ReceivedAlert[] {
  return store();
}
