import { type Logger } from '@churn-risk/core';
import {
  createMemoryDedupeStore,
  createPushQueue,
  describeError,
  RENAMED_OPTIONS,
  refuseUnknownOptions,
  type DedupeStore,
  type PushQueue,
  type PushSendOptions,
  type PushVerdict,
  type AlertRecord,
  type QueueHealth,
} from '@churn-risk/core/store';
import type { D1Database, QueueBatch, QueueMessage, QueueProducer } from './bindings.js';
import { D1Identities } from './d1-identities.js';
import { D1UserOrder } from './d1-order.js';
import { D1FailedStore, type FailedStore } from './d1-tables.js';
import { messageOf, parseMessage, type AlertMessage } from './queue-message.js';

/** Options of `createCloudflareQueue`: the bindings, and how long an identity is kept. */
export interface CloudflareQueueOptions {
  /** The Queue's producer binding: accepted alerts, and each retry, are sent to it. */
  producer: QueueProducer;
  /**
   * A D1 database for the identities, shared by every isolate: a delivery whose identity is
   * claimed there answers `202 duplicate` in any isolate. Without it, de-duplication is per
   * isolate (an in-memory LRU), so a redelivery that lands on another isolate runs again.
   */
  dedupe?: D1Database | undefined;
  /**
   * The D1 database of the failed store (table `churn_risk_failed`). It also keeps the order per
   * user (`createReceiver({ order: 'per-user' })`) when `dedupe` is not given: each user's line of
   * alerts, and the alert that holds the user.
   */
  failed: D1Database;
  /**
   * The name of the dead-letter queue (`dead_letter_queue` of the consumer in wrangler.toml),
   * when this worker consumes it too: its messages are alerts the platform gave up on (their
   * consumer died or timed out `max_retries` times); each goes to the failed store, with
   * `onError` once.
   */
  deadLetterQueue?: string | undefined;
  /** How long an identity is kept, in ms. Default 72 hours. */
  dedupeTtlMs?: number | undefined;
  /** Longest wait for the claim and the send; beyond it the answer is `503`. Default 2,000. */
  enqueueTimeoutMs?: number | undefined;
  /**
   * Deliveries of one message without a verdict (its consumer died) after which the alert is
   * failed without another try. Default 3.
   */
  maxStalls?: number | undefined;
  /** Where the consumer reports what is not an alert's failure. Default `console.error`. */
  logger?: Logger | undefined;
}

/** Queue mode on Cloudflare Queues: the receiver's queue, the consumer, and the failed store. */
export interface CloudflareQueue {
  /** The receiver's queue: `createReceiver({ secret, queue: cloudflare.queue })`. */
  readonly queue: PushQueue;
  /** The failed alerts, to list and retry. */
  readonly failed: FailedStore;
  /**
   * The consumer: runs each message of `batch` through core's try protocol (side by side), then
   * acks it, sends its retry, or stores it as failed. An alert whose verdict could not be stored
   * is sent again as a new message with its state, after a delay that doubles (1 s to 5 min);
   * only when the Queue refuses that too is the message left to the platform (`message.retry()`).
   */
  consume(batch: QueueBatch): Promise<void>;
}

const DEFAULT_DEDUPE_TTL_MS = 72 * 3_600_000;
/** The longest delay before an alert whose verdict could not be stored is tried again. */
const MAX_DEFER_SECONDS = 300;
/** Messages whose own redeliveries an isolate remembers (the oldest is forgotten first). */
const MAX_REMEMBERED = 1_000;
/** Cloudflare Queues' longest `delaySeconds` (12 hours). */
const MAX_DELAY_SECONDS = 43_200;
/**
 * The longest wait of a postponed alert (order per user) before it asks for its user again,
 * unless its user's holder is known to wait longer (a retry's delay).
 */
const MAX_POSTPONE_SECONDS = 10;

/** A retry's delay as Cloudflare Queues takes it: whole seconds, rounded up, at most 12 hours. */
export function delaySecondsOf(delayMs: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.ceil(delayMs / 1000));
}

/**
 * The options `createCloudflareQueue` knows: any other key is a `TypeError` (option-keys.test-d.ts
 * checks that the list holds every key of `CloudflareQueueOptions`).
 */
export const OPTION_KEYS = [
  'producer',
  'dedupe',
  'failed',
  'deadLetterQueue',
  'dedupeTtlMs',
  'enqueueTimeoutMs',
  'maxStalls',
  'logger',
] as const satisfies readonly (keyof CloudflareQueueOptions)[];

class CloudflareQueueMode implements CloudflareQueue {
  readonly queue: PushQueue;
  readonly failed: D1FailedStore;
  readonly #producer: QueueProducer;
  readonly #identities: D1Identities | undefined;
  /** The order per user, in D1 (`dedupe`'s database, else `failed`'s). */
  readonly #order: D1UserOrder;
  /** The identities in order per user: always in D1, in the order's database. */
  readonly #lineIdentities: D1Identities;
  /** The identities: in D1 with `dedupe`, else in this isolate. */
  readonly #claims: DedupeStore;
  readonly #ttlMs: number;
  readonly #deadLetterQueue: string | undefined;
  readonly #maxStalls: number;
  readonly #failedDb: D1Database;
  readonly #logger: Logger | undefined;
  /** Message id → how many of its redeliveries this isolate asked for (`message.retry()`). */
  readonly #own = new Map<string, number>();

  constructor(options: CloudflareQueueOptions) {
    const { producer, dedupe, failed } = options as Partial<CloudflareQueueOptions>;
    if (typeof producer?.send !== 'function') {
      throw new TypeError('createCloudflareQueue needs producer: the Queue binding, env.ALERTS.');
    }
    if (typeof failed?.prepare !== 'function') {
      throw new TypeError('createCloudflareQueue needs failed: a D1 binding, env.CHURN_RISK_DB.');
    }
    this.#producer = producer;
    this.#identities = dedupe === undefined ? undefined : new D1Identities(dedupe);
    this.#claims = this.#identities ?? createMemoryDedupeStore();
    this.#order = new D1UserOrder(dedupe ?? failed);
    this.#lineIdentities = this.#identities ?? new D1Identities(failed);
    this.#ttlMs = options.dedupeTtlMs ?? DEFAULT_DEDUPE_TTL_MS;
    this.#deadLetterQueue = options.deadLetterQueue;
    this.#maxStalls = options.maxStalls ?? 3;
    this.#failedDb = failed;
    this.#logger = options.logger;
    this.failed = new D1FailedStore(failed, producer);
    this.queue = createPushQueue({
      kind: 'cloudflare-queues',
      send: (entry, sendOptions) => this.#send(entry, sendOptions),
      order: this.#order,
      health: () => this.#health(),
      maxStalls: this.#maxStalls,
      ...(options.enqueueTimeoutMs === undefined
        ? {}
        : { enqueueTimeoutMs: options.enqueueTimeoutMs }),
    });
  }

  /**
   * Claims the identity, then sends; a failed send releases the claim (nothing is claimed). In
   * order per user the identity is claimed in D1 (in the `failed` database without `dedupe`) and,
   * in the same batch, the alert takes its place in its user's line and raises the user's newest
   * time; a failed send takes the place back with the claim.
   */
  async #send(
    entry: AlertRecord<'accepted'>,
    options: PushSendOptions | undefined,
  ): Promise<'accepted' | 'duplicate'> {
    const key = options?.order;
    const claimed =
      key === undefined
        ? await this.#claims.claim(entry.id, this.#ttlMs)
        : await this.#lineIdentities.claim(entry.id, this.#ttlMs, (expiresAt, now) =>
            this.#order.recordStatements(entry.id, key, expiresAt, now),
          );
    if (!claimed) return 'duplicate';
    try {
      await this.#producer.send(messageOf(entry, 0, []));
    } catch (error) {
      try {
        if (key === undefined) await this.#claims.release(entry.id);
        else await this.#lineIdentities.release(entry.id, [this.#order.forgetStatement(entry.id)]);
      } catch (releaseError) {
        this.#log(
          `Alert ${entry.id} was not sent to the queue and its claim could not be released ` +
            `(${describeError(releaseError)}): its redeliveries answer duplicate until the claim expires.`,
          { id: entry.id, err: releaseError },
        );
      }
      throw error;
    }
    return 'accepted';
  }

  async #health(): Promise<QueueHealth> {
    try {
      await this.#identities?.health();
      await this.#failedDb.prepare('SELECT 1').first();
      return { reachable: true };
    } catch (error) {
      return { reachable: false, error: `D1 did not answer: ${describeError(error)}` };
    }
  }

  async consume(batch: QueueBatch): Promise<void> {
    const deadLettered =
      this.#deadLetterQueue !== undefined && batch.queue === this.#deadLetterQueue;
    await Promise.all(batch.messages.map((message) => this.#run(message, deadLettered)));
    try {
      // In order per user, the order's rows (and its identities, in `failed` without `dedupe`) too.
      await (this.#order.used
        ? this.#lineIdentities.sweep((now) => this.#order.sweepStatements(now))
        : this.#identities?.sweep());
    } catch (error) {
      this.#log(`Expired alert identities could not be deleted (${describeError(error)}).`, {
        err: error,
      });
    }
  }

  async #run(message: QueueMessage, deadLettered: boolean): Promise<void> {
    const body = parseMessage(message.body);
    if (body === undefined) {
      this.#log(`Message ${message.id} is not a churn-risk alert message; it was acked.`, {
        messageId: message.id,
      });
      message.ack();
      return;
    }
    const { entry } = body;
    const own = this.#own.get(message.id) ?? 0;
    if (deadLettered && own > 0) {
      // Our own retries moved it here, not a dying consumer: back to the alerts queue, as it was.
      await this.#defer(message, body, own);
      return;
    }
    // A delivery of this message that was neither ours nor ended with a verdict is a stall: its
    // consumer died or timed out. One the platform dead-lettered stalled too often.
    const stalls = deadLettered
      ? this.#maxStalls + 1
      : (body.stalls ?? 0) + Math.max(0, message.attempts - 1 - own);
    let { succeeded } = body;
    const delivered: AlertRecord<'delivered'> = {
      ...entry,
      tries: body.tries,
      succeeded: body.succeeded,
      stalls,
    };
    const apply = async (verdict: PushVerdict): Promise<boolean> => {
      if (verdict.outcome === 'postponed') {
        await this.#postpone(message, { ...body, stalls }, verdict.delayMs);
        return true;
      }
      if (verdict.outcome !== 'completed') ({ succeeded } = verdict);
      if (verdict.outcome === 'retry') {
        // In order per user the alert keeps its user through the delay, not only the try.
        if (this.#order.holding.has(delivered))
          await this.#order.holdFor(delivered, verdict.delayMs);
        await this.#producer.send(messageOf(entry, verdict.tries, succeeded), {
          delaySeconds: delaySecondsOf(verdict.delayMs),
        });
      } else if (verdict.outcome === 'failed') {
        await this.failed.add({ entry, tries: verdict.tries, succeeded, error: verdict.error });
      }
      message.ack();
      return true;
    };
    try {
      await this.queue.runDelivered(delivered, apply);
      this.#own.delete(message.id);
    } catch (error) {
      this.#log(
        `The verdict for alert ${entry.id} was not stored (${describeError(error)}); tried again later.`,
        {
          id: entry.id,
          err: error,
        },
      );
      await this.#defer(message, { ...body, succeeded, stalls }, own);
    }
  }

  /**
   * An alert that must wait for its user (order per user; no try ran): sent again as a new
   * message carrying `state` (the same try, the record, the stalls counted so far) and one more
   * postponement, then this one is acked. Not `message.retry()`: that counts in `attempts`, so
   * the wait would look like a stall at the next delivery (in any other isolate), and the
   * platform's `max_retries` would move a user's later alerts to the dead-letter queue. The delay
   * is `delayMs` (the holder's retry's delay, or 1 s), and at least 1 s more for each
   * postponement in a row, up to 10 s.
   */
  async #postpone(message: QueueMessage, state: AlertMessage, delayMs: number): Promise<void> {
    const postponements = state.postponements ?? 0;
    const delaySeconds = Math.max(
      delaySecondsOf(delayMs),
      Math.min(MAX_POSTPONE_SECONDS, postponements + 1),
    );
    await this.#producer.send({ ...state, postponements: postponements + 1 }, { delaySeconds });
    message.ack();
    this.#own.delete(message.id);
  }

  /**
   * A verdict that could not be stored (the retry's send or the failed store's write failed): the
   * try did not count, and neither may the redelivery. `message.attempts` counts every delivery
   * of one message, so a `message.retry()` of ours would look like a stall at the next delivery,
   * and a store outage would fail a healthy alert as poison (the platform's `max_retries` would
   * also move it to the dead-letter queue). So the alert is sent again as a new message (whose
   * `attempts` starts at 1) carrying `state`: the same try, the handlers known to have succeeded,
   * the stalls counted so far and one more deferral (the delay doubles: 1 s, 2 s, 4 s, up to
   * 5 min); then this one is acked. Only when that send fails too (the Queue refuses sends) is
   * the message left to the platform, `message.retry()`. A retry cannot change a body, so this
   * isolate remembers that redelivery by the message's id (which a retry keeps): the next
   * delivery subtracts it from `attempts`, and the dead-letter queue's consumer sends such a
   * message back to the alerts queue instead of failing it as poison. A redelivery that reaches
   * another isolate has no such memory and counts the retry as a stall: the error is on the side
   * of the poison check, and only while the Queue refuses sends.
   */
  async #defer(message: QueueMessage, state: AlertMessage, own: number): Promise<void> {
    const deferrals = (state.deferrals ?? 0) + own;
    const delaySeconds = Math.min(MAX_DEFER_SECONDS, 2 ** deferrals);
    try {
      await this.#producer.send({ ...state, deferrals: deferrals + 1 }, { delaySeconds });
      message.ack();
      this.#own.delete(message.id);
    } catch (error) {
      this.#log(
        `Alert ${state.entry.id} was not sent again (${describeError(error)}); the platform redelivers it.`,
        {
          id: state.entry.id,
          err: error,
        },
      );
      if (this.#own.size >= MAX_REMEMBERED) this.#own.delete(this.#own.keys().next().value ?? '');
      this.#own.set(message.id, own + 1);
      message.retry({ delaySeconds });
    }
  }

  #log(message: string, fields: Record<string, unknown>): void {
    if (this.#logger === undefined) console.error(`[churn-risk] ${message}`, fields);
    else this.#logger.error(fields, message);
  }
}

/**
 * Queue mode on Cloudflare Queues, for a receiver you build yourself (`createQueueWorker`
 * builds it for you): the push queue to give `createReceiver`, the consumer for the worker's
 * `queue` handler, and the failed store. An accepted alert is claimed (in D1 with `dedupe`) and
 * sent to the Queue before the `202`; the consumer runs core's try protocol on each message.
 *
 * @example
 * const cf = createCloudflareQueue({ producer: env.CHURN_RISK_ALERTS, dedupe: env.CHURN_RISK_DB, failed: env.CHURN_RISK_DB });
 * const receiver = createReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET, queue: cf.queue });
 * // export default { fetch: (req) => receiver.fetch(req), queue: (batch) => cf.consume(batch) };
 */
export function createCloudflareQueue(options: CloudflareQueueOptions): CloudflareQueue {
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new TypeError('createCloudflareQueue needs { producer, failed, dedupe? }.');
  }
  refuseUnknownOptions('createCloudflareQueue', options, OPTION_KEYS, RENAMED_OPTIONS);
  return new CloudflareQueueMode(options);
}
