import { refuseUnknownOptions } from '../../options/known-options.js';
import type {
  AlertProcessor,
  AlertQueue,
  AlertRecord,
  QueueHealth,
} from '../../queue-port/alert-queue.js';
import { integerOption } from '../../options/integer-option.js';
import { runStoredTry } from '../try-protocol.js';
import type { TryLease, TryVerdict } from '../../queue-port/try-types.js';
import { orderKeyOf, type AlertVerdict, type UserOrderKey } from './alert-store.js';
import type { PushOrder } from './push-order.js';
import { DurableQueueBase } from './queue-base.js';

/** Options of `createPushQueue`: the producer side of a platform queue. */
export interface PushQueueOptions {
  /** A short name for messages and health output, e.g. `'cloudflare-queues'`. */
  kind: string;
  /**
   * Sends an accepted alert to the platform queue before the receiver answers `202`:
   * `'duplicate'` when a shared identity store (D1) says it was seen. A rejection (or no answer
   * within `enqueueTimeoutMs`) is answered `503 OVERLOADED`, and nothing is claimed.
   */
  send(
    entry: AlertRecord<'accepted'>,
    options?: PushSendOptions,
  ): Promise<'accepted' | 'duplicate'>;
  /**
   * The order per user on this platform (`createReceiver({ order: 'per-user' })`): a shared table
   * (a D1 row, a conditional DynamoDB write) that holds a user for one alert at a time. Required
   * by a receiver in order per user: without it the queue throws a `TypeError` when such a
   * receiver is attached, or at its first alert.
   */
  order?: PushOrder;
  /** Whether the platform queue answers (for `receiver.health()`). */
  health?(): Promise<QueueHealth>;
  /** Longest wait for `send`; beyond it the answer is `503`. Default 2,000. */
  enqueueTimeoutMs?: number;
  /** Redeliveries without a verdict after which the alert is failed without a try. Default 3. */
  maxStalls?: number;
}

/** How `send` stores an alert. */
export interface PushSendOptions {
  /**
   * Set in order per user: the alert's user and time. The sender records the alert in the
   * user's line (with its identity, in the same write) and the newest time accepted for the user,
   * kept for `dedupeTtlMs` like identities.
   */
  order?: UserOrderKey;
}

/**
 * What a push queue's `apply` gets: a try's verdict, or, in order per user, `postponed`: no try
 * ran (the user is held by another alert, or an older alert of the user waits); the message goes
 * back to the platform queue for `delayMs` with its `tries`, `succeeded` and stalls unchanged.
 */
export type PushVerdict =
  AlertVerdict | { readonly outcome: 'postponed'; readonly delayMs: number };

/** The queue `createPushQueue` returns: an `AlertQueue`, plus the consumer's entry point. */
export interface PushQueue extends AlertQueue {
  /**
   * Runs one try of a message the platform delivered (core's try protocol, with the handlers of
   * the receiver this queue was given to) and hands the verdict to `apply`, which applies it on
   * the platform (`completed`: ack; `retry`: a new message with the verdict's `tries`, record
   * and delay; `failed`: the failed store) and resolves `true` once that went through.
   *
   * In order per user, `order.claim` comes first: when the alert must wait, no try runs and
   * `apply` gets `{ outcome: 'postponed', delayMs }` (send the message back for that long, its
   * `tries`, record and stalls unchanged); when it holds its user, the try runs (superseded when
   * a later alert of the user was accepted), and after a `completed` or `failed` verdict went
   * through, `order.release` frees the user (a release that rejects is logged: the platform's
   * hold then lapses on its own). The
   * message is an `AlertRecord<'delivered'>` as the previous try's verdict left it (`tries` 0 and `succeeded`
   * empty for the first delivery), with `stalls` the redeliveries the platform made without a
   * verdict (its consumer died or timed out). A `failed` verdict reaches `onError` only after
   * `apply` resolved `true`: exactly once per failed alert. Rejects only when `apply` or
   * `order.claim` rejects (then nothing was reported, and the platform redelivers the message).
   *
   * @example
   * // A Cloudflare Queues consumer, one message:
   * await queue.runDelivered(message.body, async (verdict) => {
   *   if (verdict.outcome === 'postponed') { await env.ALERTS.send(message.body, { delaySeconds: Math.ceil(verdict.delayMs / 1000) }); message.ack(); }
   *   else if (verdict.outcome === 'completed') message.ack();
   *   else if (verdict.outcome === 'retry') { await env.ALERTS.send({ ...message.body, tries: verdict.tries, succeeded: verdict.succeeded }, { delaySeconds: Math.ceil(verdict.delayMs / 1000) }); message.ack(); }
   *   else { await env.DB.prepare('INSERT INTO failed ...').run(); message.ack(); }
   *   return true;
   * });
   */
  runDelivered(
    message: AlertRecord<'delivered'>,
    apply: (verdict: PushVerdict) => Promise<boolean>,
  ): Promise<void>;
}

/** A try's verdict as a push queue applies it: with the tries made, this one included. */
function toAlertVerdict(verdict: TryVerdict, tries: number): AlertVerdict {
  if (verdict.outcome === 'completed') return verdict;
  const { succeeded, error } = verdict;
  const made = tries + 1;
  if (verdict.outcome === 'failed') return { outcome: 'failed', tries: made, succeeded, error };
  return { outcome: 'retry', delayMs: verdict.delayMs, tries: made, succeeded, error };
}

class PlatformPushQueue extends DurableQueueBase implements PushQueue {
  readonly kind: string;
  protected readonly notRecorded: string;
  readonly #options: PushQueueOptions;
  readonly #maxStalls: number;

  constructor(options: PushQueueOptions) {
    if (typeof (options as unknown) !== 'object' || typeof options.send !== 'function') {
      throw new TypeError('createPushQueue needs { kind, send(entry) }.');
    }
    super(integerOption('enqueueTimeoutMs', options.enqueueTimeoutMs ?? 2_000, 1));
    this.kind = options.kind;
    this.notRecorded = `The ${this.kind} queue did not take the alert`;
    this.#options = options;
    this.#maxStalls = integerOption('maxStalls', options.maxStalls ?? 3, 0);
  }

  override attach(processor: AlertProcessor, how?: { consume?: boolean | 'invocation' }): void {
    this.#orderOf(processor);
    super.attach(processor, how);
  }

  /**
   * The platform's order when `processor` runs in order per user (`undefined` otherwise); a
   * `TypeError` when it does and this queue was given no `order`.
   */
  #orderOf(processor: AlertProcessor | undefined): PushOrder | undefined {
    if (processor?.order !== 'per-user') return undefined;
    const { order } = this.#options;
    if (order === undefined) {
      throw new TypeError(
        `order: 'per-user' needs the ${this.kind} queue's order (createSqsQueue({ order: createDynamoOrder() }) on SQS).`,
      );
    }
    return order;
  }

  protected async record(entry: AlertRecord<'accepted'>): Promise<'accepted' | 'duplicate'> {
    const order = this.#orderOf(this.processor);
    if (order === undefined) return this.#options.send(entry);
    return this.#options.send(entry, { order: orderKeyOf(entry) });
  }

  async runDelivered(
    message: AlertRecord<'delivered'>,
    apply: (verdict: PushVerdict) => Promise<boolean>,
  ): Promise<void> {
    const processor = this.processor;
    if (processor === undefined) {
      throw new TypeError('Give the queue to createReceiver({ queue }) before it runs messages.');
    }
    const order = this.#orderOf(processor);
    await this.counted(() => {
      const stored = {
        tries: message.tries,
        succeeded: message.succeeded,
        stalls: message.stalls ?? 0,
      };
      // The platform owns the delivery (no lease of ours to lose): the signal never aborts.
      const lease: TryLease = { signal: new AbortController().signal, stalls: stored.stalls };
      const start = (
        held: TryLease,
        applied?: (verdict: TryVerdict) => Promise<void>,
      ): Promise<unknown> =>
        runStoredTry(
          processor.input(message),
          stored,
          this.#maxStalls,
          async (verdict) => {
            const done = await apply(toAlertVerdict(verdict, message.tries));
            if (done) await applied?.(verdict);
            return done;
          },
          held,
        );
      if (order === undefined) return start(lease);
      const postpone = (delayMs: number) => apply({ outcome: 'postponed', delayMs });
      return order.run(message, postpone, start, lease, processor.logger);
    });
  }

  consume(): void {
    // The platform pushes messages to the consumer, which calls runDelivered.
  }

  idle(): Promise<void> {
    return Promise.resolve(); // the platform holds what is waiting
  }

  close(): Promise<void> {
    this.refuseAccepts();
    return Promise.resolve();
  }

  health(): Promise<QueueHealth> {
    return this.#options.health?.() ?? Promise.resolve({ reachable: true });
  }
}

/**
 * A durable queue on a push-based platform queue (Cloudflare Queues, Amazon
 * SQS): `send` stores an accepted alert on the platform before the `202`, and the platform's
 * consumer calls `runDelivered` for each message, which runs core's one try protocol and hands
 * back the verdict to apply, with the same `onError` rule as `createDurableQueue`.
 *
 * @example
 * const queue = createPushQueue({ kind: 'cloudflare-queues', send: (entry) => env.ALERTS.send({ ...entry, tries: 0, succeeded: [] }).then(() => 'accepted') });
 * const receiver = createReceiver({ secret, queue });
 */
export function createPushQueue(options: PushQueueOptions): PushQueue {
  refuseUnknownOptions('createPushQueue', options, [
    'kind',
    'send',
    'health',
    'enqueueTimeoutMs',
    'maxStalls',
    'order',
  ]);
  return new PlatformPushQueue(options);
}
