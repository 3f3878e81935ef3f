import type { ChurnRiskAlert } from '@churn-risk/core';
import type { DeliveryFilter } from './delivery-filter.js';
import type { DeliveryAttempt } from './send-attempt.js';

/** The state of a delivery: `pending` until a 2xx answer (`delivered`) or the 72 h window ends (`failed`). */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One entry of the delivery log (`GET /v1/deliveries`). */
export interface DeliveryRecord {
  id: string;
  alert: ChurnRiskAlert;
  webhook: string;
  attempts: DeliveryAttempt[];
  state: DeliveryState;
  /** When the next try is due, ISO 8601 UTC; `null` once delivered or failed. */
  nextAttemptAt: string | null;
  /** The delivery this one replays (`POST /v1/deliveries/{id}/replay`). */
  replayOf?: string;
}

/** The deliveries of a sandbox: the log, and ways for tests to wait on it. */
export interface Deliveries {
  /** Starts delivering an alert (first try at once) and returns its log entry. */
  enqueue(alert: ChurnRiskAlert, webhook: string): DeliveryRecord;
  /**
   * Starts a new delivery of the same payload (byte-identical, signed afresh) to the same webhook,
   * with its own retries; `undefined` for an unknown id.
   */
  replay(id: string): DeliveryRecord | undefined;
  /** Every delivery that passes `filter`, oldest first (copies: changing them changes nothing). */
  list(filter?: DeliveryFilter): DeliveryRecord[];
  /** One delivery by id. */
  get(id: string): DeliveryRecord | undefined;
  /**
   * Resolves when no try is in flight: each delivery is then delivered, failed, or waiting for its
   * next try's timer (advance a manual clock to run it).
   */
  idle(): Promise<void>;
  /** Stops every timer, aborts tries in flight and waits for them; pending deliveries stay pending. */
  close(): Promise<void>;
}
