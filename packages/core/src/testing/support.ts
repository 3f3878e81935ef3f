// What every case group of `storeContract` and `pushQueueContract` shares: the runner's test
// functions, assertions that say what differs, fresh alerts and their signed deliveries, waiting.
import { nap } from '../processing/durable/take-loop.js';
import { ChurnRiskError } from '../errors/churn-risk-error.js';
import type { AlertRecord } from '../queue-port/alert-queue.js';
import { signPayload } from '../signature/sign.js';
import type { Logger } from '../observability/logger.js';

/**
 * The test functions `storeContract` registers its cases with: vitest's, jest's, mocha's or
 * `node:test`'s `describe` and `it` all fit. The contract asserts on its own (it throws an `Error`
 * that says what differs), so no `expect` is needed.
 */
export interface ContractTestApi {
  /** Groups the contract's cases under `name` (the runner's `describe`). */
  describe(name: string, fn: () => void): unknown;
  /** `timeout` (ms) is passed as the third argument, as vitest, jest and bun take it. */
  it(name: string, fn: () => Promise<void>, timeout?: number): unknown;
}

/** What a case throws when the back end does not do what the contract asks. */
export class ContractError extends ChurnRiskError {
  override readonly name = 'StoreContractError';
  override readonly code = 'CONTRACT_BROKEN' as const;
}

/** Fails the case with `message` unless `condition` holds. */
export function check(condition: boolean, message: string): void {
  if (!condition) throw new ContractError(`storeContract: ${message}`);
}

/** Fails the case unless `actual` and `expected` are the same as JSON. */
export const same = (actual: unknown, expected: unknown, what: string): void => {
  const a = JSON.stringify(actual);
  const b = JSON.stringify(expected);
  check(a === b, `${what}: expected ${b}, got ${a}`);
};

/** The secret of the receivers the cases make. */
export const SECRET = 'whsec_store_contract';
let sequence = 0;

/** A fresh alert, as the receiver queues it. */
export function queuedAlert(): AlertRecord<'accepted'> {
  sequence += 1;
  const triggeredAt = new Date(Date.UTC(2026, 0, 1) + sequence * 1000).toISOString();
  const userId = `contract_${String(sequence)}_${Math.random().toString(36).slice(2, 8)}`;
  return {
    id: `${userId}:${triggeredAt}`,
    alert: {
      event: 'churn_risk_alert',
      userId,
      score: 0.8,
      tier: 'high',
      signals: ['activity_drop'],
      recommendation: 'Reach out.',
      triggeredAt,
    },
    receivedAt: Date.now(),
  };
}

/** A signed delivery of `alert` (default a fresh one), for `receiver.handle`. */
export function delivery(alert: AlertRecord<'accepted'> = queuedAlert()): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const body = JSON.stringify(alert.alert);
  const { signature, timestamp } = signPayload({ body, secret: SECRET });
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signature,
      'x-service-timestamp': timestamp,
    },
    body,
  };
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => nap(ms).done;

/** Asks `attempt` again every 25 ms until it gives a value, or fails the case after `ms`. */
export async function eventually<T>(
  what: string,
  ms: number,
  attempt: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    check(Date.now() < deadline, `${what}: not within ${String(ms)} ms`);
    await sleep(25);
  }
}

let tokens = 0;
/** A lease token no other take has used, named after `who` takes. */
export const token = (who: string): string => `${who}-${String(++tokens)}`;

/** A logger that writes nothing, for tests whose receivers would log failures they cause. */
export const quietLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
