// What the receiver-level cases run on: a platform of queues that share one back end, and the
// receivers the cases make on it.
import type { AlertQueue, AlertRecord } from '../queue-port/alert-queue.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { Receiver, RetryOptions } from '../receiver/types.js';
import { SECRET } from './support.js';

/**
 * The back end under the receiver-level cases: each `queue()` is one more process's (or isolate's)
 * queue on the case's one shared back end. `createDurableQueue` over two store instances fits; so
 * does a push queue (`createPushQueue`) on a platform queue whose consumer runs the messages.
 */
export interface ReceiverPlatform {
  /** A queue for one more receiver on the shared back end. */
  queue(): AlertQueue;
  /**
   * Resolves once every alert the receivers accepted has reached its end (completed, or failed
   * and reported), retries included. `receivers` are the case's receivers, in creation order.
   */
  settle(receivers: readonly Receiver[]): Promise<void>;
  /** The failed store's alerts. */
  failed(): Promise<AlertRecord<'failed'>[]>;
  /** Puts a failed alert back (tries reset, the record of succeeded handlers kept). */
  retry(id: string): Promise<void>;
  /**
   * Puts back every alert failed when it is called; resolves with how many. Where it is given,
   * `pushQueueContract` runs retries at once (calls of it and of `retry`, from several processes
   * or isolates where the platform has them): each failed alert is sent back once.
   */
  retryAll?(): Promise<number>;
  /** Releases what the platform opened (called after the case's receivers are closed). */
  close(): Promise<void>;
}

/** A receiver-level case: `receivers` are the case's receivers, closed after it. */
export type ReceiverCase = (platform: ReceiverPlatform, receivers: Receiver[]) => Promise<void>;

/** Registers the receiver-level case `name`, run on a fresh platform. */
export type RunReceiverCase = (name: string, body: ReceiverCase) => void;

/**
 * A receiver on one more of `platform`'s queues, added to `receivers`; `retries` as a number
 * retries after 5 ms.
 */
export function receiverOn(
  platform: ReceiverPlatform,
  receivers: Receiver[],
  retries: number | RetryOptions = 0,
): Receiver {
  const receiver = createReceiver({
    secret: SECRET,
    queue: platform.queue(),
    retries: typeof retries === 'number' ? { retries, backoffMs: () => 5 } : retries,
  });
  receivers.push(receiver);
  return receiver;
}
