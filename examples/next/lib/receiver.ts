import { createReceiver, type Receiver } from '@churn-risk/core';
import { recordAlert } from './alert-store';

/** Reads the signing secret from the environment at request time (it need not exist at build time). */
function secretFromEnv(): string {
  const secret = process.env.CHURN_RISK_WEBHOOK_SECRET;
  if (!secret) throw new Error('Set CHURN_RISK_WEBHOOK_SECRET to the webhook signing secret.');
  return secret;
}

/** `CHURN_RISK_EXAMPLE_HANDLER_DELAY_MS` makes the handler slow, to show work outliving the answer. */
function handlerDelayMs(): number {
  const delay = Number(process.env.CHURN_RISK_EXAMPLE_HANDLER_DELAY_MS ?? 0);
  return Number.isFinite(delay) && delay > 0 ? delay : 0;
}

/** Creates the example's receiver: it records each alert under `route` and logs it. */
export function createExampleReceiver(route: string): Receiver {
  const receiver = createReceiver({ secret: secretFromEnv() });
  receiver.on('churn_risk_alert', async (alert, context) => {
    const delay = handlerDelayMs();
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    recordAlert({ id: context.id, route, receivedAt: context.receivedAt.toISOString(), alert });
    console.log(`[churn-risk] processed ${context.id} via ${route}`);
  });
  receiver.onError((error, alert) => {
    console.error(`[churn-risk] handler failed for ${alert.userId}`, error);
  });
  return receiver;
}

/**
 * Returns one receiver per route, created on first use and kept on `globalThis`, so a redelivered
 * alert is recognised as a duplicate for the life of the process.
 */
export function exampleReceiver(route: string): Receiver {
  const key = Symbol.for(`churn-risk.example-next.receiver.${route}`);
  const holder = globalThis as typeof globalThis & Record<symbol, Receiver | undefined>;
  return (holder[key] ??= createExampleReceiver(route));
}
