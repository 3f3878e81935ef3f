import { createReceiver, type Receiver, type ReceiverOptions } from '@churn-risk/core';
import { signPayload } from '@churn-risk/core/testing';

/** The secret every conformance receiver is built with. */
export const SECRET = 'whsec_conformance_2f7c1e9a';
/** A fixed clock, so signed timestamps never drift out of tolerance during a slow run. */
export const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
/** `NOW_MS` in Unix seconds. */
export const NOW_S = Math.floor(NOW_MS / 1000);
/** The path adapters are mounted at in the conformance suite. */
export const WEBHOOK_PATH = '/webhooks/churn-risk';

/** A receiver with the conformance secret and clock; handler retries off unless asked. */
export function conformanceReceiver(options: Partial<ReceiverOptions> = {}): Receiver {
  return createReceiver({ secret: SECRET, now: () => NOW_MS, retries: 0, ...options });
}

let sequence = 0;

/** A valid `churn_risk_alert` with a fresh identity each call. */
export function makeAlert(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    event: 'churn_risk_alert',
    userId: `user_${sequence}`,
    score: 0.82,
    tier: 'high',
    signals: ['activity_drop', 'payment_failed'],
    recommendation: 'Reach out before the next billing date.',
    triggeredAt: new Date(NOW_MS - sequence * 1000).toISOString(),
    ...overrides,
  };
}

/** Options of `signedHeaders`. */
export interface SignOptions {
  secret?: string;
  timestamp?: number;
}

/** The headers of a delivery of `body` signed like the service does (JSON content type). */
export function signedHeaders(body: string, options: SignOptions = {}): Record<string, string> {
  const { signature, timestamp } = signPayload({
    body,
    secret: options.secret ?? SECRET,
    timestamp: options.timestamp ?? NOW_S,
  });
  return {
    'content-type': 'application/json',
    'x-service-signature': signature,
    'x-service-timestamp': timestamp,
  };
}

/** A promise with its resolve function, to hold a handler until the test lets it go. */
export interface Gate {
  promise: Promise<void>;
  open: () => void;
}

/** Creates a closed gate. */
export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
