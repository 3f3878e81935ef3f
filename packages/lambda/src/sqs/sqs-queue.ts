import {
  createPushQueue,
  describeError,
  withTimeout,
  type AcceptResult,
  type AlertProcessor,
  type AlertRecord,
  type PushQueue,
  type PushVerdict,
  type FailedListOptions,
  type QueueCounts,
  type QueueHealth,
  type UserOrderKey,
} from '@churn-risk/core/store';
import { awsCalls, type AwsCalls } from './aws-sdk.js';
import { DynamoFailedTable } from './dynamo-failed-table.js';
import { DynamoIdentities } from './dynamo-identities.js';
import type { DynamoOrderBinding, SqsUserOrder } from './dynamo-order.js';
import {
  refuseOtherQueues,
  type SqsBatchResponse,
  type SqsEvent,
  type SqsRecord,
} from './sqs-events.js';
import { delaySecondsOf, MAX_DELAY_SECONDS, messageOf, parseMessage } from './sqs-message.js';
import type { SqsAlertMessage } from './sqs-message.js';
import {
  resolveSqsQueueOptions,
  type ResolvedSqsQueueOptions,
  type SqsQueueOptions,
} from './sqs-options.js';

/**
 * Queue mode on SQS and DynamoDB: the receiver's queue (`createReceiver({ secret, queue })`),
 * the consumer of the SQS event source mapping, and the failed set.
 */
export interface SqsQueue extends PushQueue {
  /** The queue's URL. */
  readonly queueUrl: string;
  /**
   * The consumer (`createLambdaHandler` calls it for SQS events): runs each record through core's
   * try protocol, side by side, and applies its verdict (deleted; a new message with the record
   * and the delay; the failed table). A record whose verdict could not be written is listed in
   * `batchItemFailures`, so SQS delivers it again after the visibility timeout. Rejects with a
   * `TypeError`, running nothing, when a record came from another queue (its `eventSourceARN`).
   */
  handleSqsEvent(event: SqsEvent): Promise<SqsBatchResponse>;
  /** Failed alerts (after their last try, or poison), newest first. */
  failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]>;
  /**
   * Sends a failed alert back to the queue, its tries counted afresh; handlers that already
   * succeeded for it are not run again. `id` is the alert identity (a failed record's `id`) or
   * its `jobId`. Rejects with a `TypeError` when there is no such failed alert (or another retry
   * sent it meanwhile).
   */
  retry(id: string): Promise<void>;
  /**
   * Sends back every alert failed when it is called, once each, skipping one that another retry
   * sent meanwhile; resolves with how many it sent.
   */
  retryAll(): Promise<number>;
  /**
   * Alerts by state: `waiting`, `active` (in flight) and `delayed` as SQS reports them
   * (approximate), `failed` from the failed table; `completed` is 0 (SQS deletes them).
   */
  counts(): Promise<QueueCounts>;
  /** Messages waiting and delayed in the queue (approximate): the queue-depth gauge. */
  depth(): Promise<number>;
  /** Whether SQS and both tables answer. Never rejects. */
  health(): Promise<QueueHealth>;
}

/** How long `health()` waits for each of SQS and the two tables. */
const HEALTH_TIMEOUT_MS = 2_000;
/** Redeliveries we asked for, remembered here when DynamoDB could not take the note. */
const MAX_LOCAL_NOTES = 1_000;

class SqsQueueMode implements SqsQueue {
  readonly kind = 'sqs';
  readonly processesInline = false;
  readonly durable = true;
  readonly queueUrl: string;
  readonly queueKey: string;
  readonly #options: ResolvedSqsQueueOptions;
  readonly #push: PushQueue;
  readonly #identities: DynamoIdentities;
  readonly #lines: SqsUserOrder | undefined;
  readonly #failed: DynamoFailedTable;
  readonly #localNotes = new Map<string, number>();
  readonly #aws: AwsCalls;
  #processor: AlertProcessor | undefined;

  constructor(options: ResolvedSqsQueueOptions) {
    this.#options = options;
    this.queueUrl = options.queueUrl;
    this.queueKey = options.queueKey;
    this.#aws = awsCalls(options.sqs, options.dynamodb, options);
    this.#identities = new DynamoIdentities(options.dedupeTable, this.#aws);
    this.#failed = new DynamoFailedTable(
      options.failedTable,
      options.queueName,
      options.keepFailedMs,
      this.#aws,
    );
    const lines = (options.order as DynamoOrderBinding | undefined)?.open(options, this.#aws);
    this.#lines = lines;
    this.#push = createPushQueue({
      kind: 'sqs',
      send: (entry, sent) => this.#accept(entry, sent?.order),
      ...(lines && { order: lines }),
      health: () => this.health(),
      maxStalls: options.maxStalls,
      enqueueTimeoutMs: options.enqueueTimeoutMs,
    });
  }

  // The receiver's side, through core's push queue.

  attach(processor: AlertProcessor): void {
    this.#push.attach(processor);
    this.#processor = processor;
  }

  accept(entry: AlertRecord<'accepted'>): Promise<AcceptResult> {
    return Promise.resolve(this.#push.accept(entry));
  }

  consume(): void {
    this.#push.consume();
  }

  idle(): Promise<void> {
    return this.#push.idle();
  }

  async close(): Promise<void> {
    await this.#push.close();
  }

  get queued(): number {
    return this.#push.queued;
  }

  get running(): number {
    return this.#push.running;
  }

  runDelivered(
    message: AlertRecord<'delivered'>,
    apply: (verdict: PushVerdict) => Promise<boolean>,
  ): Promise<void> {
    return this.#push.runDelivered(message, apply);
  }

  /**
   * Claims the identity (in order per user, in the user's line), then sends; a failed send
   * releases the claim (nothing is claimed).
   */
  async #accept(
    entry: AlertRecord<'accepted'>,
    order: UserOrderKey | undefined,
  ): Promise<'accepted' | 'duplicate'> {
    const token = crypto.randomUUID();
    const claims = (order && this.#lines?.claims(order)) || this.#identities;
    if (!(await claims.claim(entry.id, this.#options.dedupeTtlMs, token))) {
      return 'duplicate';
    }
    try {
      await this.#send(messageOf(entry, 0, []), 0);
    } catch (error) {
      try {
        await claims.release(entry.id, token);
      } catch (releaseError) {
        this.#log(
          `Alert ${entry.id} was not sent to SQS and its claim could not be released ` +
            `(${describeError(releaseError)}): its redeliveries answer duplicate until it expires.`,
          { id: entry.id, err: releaseError },
        );
      }
      throw error;
    }
    return 'accepted';
  }

  /** Sends `message`, due in `delayMs`: over 15 minutes, the first hop carries `notBefore`. */
  async #send(message: SqsAlertMessage, delayMs: number): Promise<void> {
    const hop = delayMs > MAX_DELAY_SECONDS * 1000;
    await this.#aws.sqs('SendMessage', {
      QueueUrl: this.queueUrl,
      MessageBody: JSON.stringify(hop ? { ...message, notBefore: Date.now() + delayMs } : message),
      DelaySeconds: delaySecondsOf(delayMs),
    });
  }

  // The consumer.

  async handleSqsEvent(event: SqsEvent): Promise<SqsBatchResponse> {
    refuseOtherQueues(event, this.queueKey, this.queueUrl);
    const results = await Promise.all(event.Records.map((record) => this.#consume(record)));
    const again = event.Records.filter((_, i) => results[i] === false);
    // Every record listed here is delivered again because we asked: noted, so that its next
    // receive count is not taken for a consumer's death.
    await Promise.all(again.map((record) => this.#noteRedelivery(record.messageId)));
    return { batchItemFailures: again.map((record) => ({ itemIdentifier: record.messageId })) };
  }

  /** One record: resolves true when it is done with (deleted), false to have it delivered again. */
  async #consume(record: SqsRecord): Promise<boolean> {
    const message = parseMessage(record.body);
    if (message === undefined) {
      this.#log(`Message ${record.messageId} is not a churn-risk alert message; it was deleted.`, {
        messageId: record.messageId,
      });
      return true;
    }
    const { entry, tries, succeeded, notBefore, stalls: before = 0 } = message;
    try {
      const wait = (notBefore ?? 0) - Date.now();
      if (wait >= 1000) {
        // A delay longer than SQS takes: the next hop.
        await this.#send(messageOf(entry, tries, succeeded), wait);
        return true;
      }
      const stalls = await this.#stalls(record, before);
      await this.#push.runDelivered({ ...entry, tries, succeeded, stalls }, (verdict) =>
        this.#apply(entry, verdict, { ...messageOf(entry, tries, succeeded), stalls }),
      );
      this.#localNotes.delete(record.messageId);
      return true;
    } catch (error) {
      this.#log(
        `The verdict for alert ${entry.id} could not be written (${describeError(error)}); ` +
          'SQS delivers the message again after its visibility timeout.',
        { id: entry.id, messageId: record.messageId, err: error },
      );
      return false;
    }
  }

  /**
   * The record's deliveries whose consumer died: its receives before this one, less those we
   * asked for, and `before`, those of the message it postponed. The notes are read only when the
   * count could reach `maxStalls` (a failed read leaves the record to be delivered again, undecided).
   */
  async #stalls(record: SqsRecord, before: number): Promise<number> {
    const received = Number(record.attributes.ApproximateReceiveCount);
    const earlier = before + (Number.isInteger(received) && received > 1 ? received - 1 : 0);
    if (earlier <= this.#options.maxStalls) return earlier;
    const noted = await this.#identities.redeliveries(record.messageId);
    return earlier - Math.max(noted, this.#localNotes.get(record.messageId) ?? 0);
  }

  async #noteRedelivery(messageId: string): Promise<void> {
    if (this.#localNotes.size >= MAX_LOCAL_NOTES) this.#localNotes.clear();
    this.#localNotes.set(messageId, (this.#localNotes.get(messageId) ?? 0) + 1);
    try {
      await this.#identities.noteRedelivery(messageId);
    } catch (error) {
      this.#log(
        `The redelivery of message ${messageId} could not be noted in DynamoDB ` +
          `(${describeError(error)}); only this instance knows that its consumer did not die.`,
        { messageId, err: error },
      );
    }
  }

  /** Applies `verdict` on alert `entry`, delivered in `message` (a postponed one goes back as is). */
  async #apply(
    entry: AlertRecord<'accepted'>,
    verdict: PushVerdict,
    message: SqsAlertMessage,
  ): Promise<boolean> {
    if (verdict.outcome === 'postponed') await this.#send(message, verdict.delayMs);
    else if (verdict.outcome === 'retry') {
      await this.#lines?.keep(entry.id, verdict.delayMs);
      await this.#send(messageOf(entry, verdict.tries, verdict.succeeded), verdict.delayMs);
    } else if (verdict.outcome === 'failed') {
      const { tries, succeeded, error } = verdict;
      await this.#failed.add({ entry, tries, succeeded, error });
    }
    return true;
  }

  // The failed set.

  failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]> {
    return this.#failed.failed(options);
  }

  async retry(id: string): Promise<void> {
    const [found] = await this.#failed.all(id);
    if (found === undefined || !(await this.#resend(found))) {
      throw new TypeError(`No failed alert has the id ${id}.`);
    }
  }

  async retryAll(): Promise<number> {
    // The items now (a snapshot): an alert that fails again is a new item, not in it.
    let retried = 0;
    for (const failed of await this.#failed.all()) if (await this.#resend(failed)) retried++;
    return retried;
  }

  /**
   * Sends failed alert `failed` back to the queue, once: the item is claimed first, in one
   * conditional write, so that retries at once in any processes send it once; the others skip it
   * (false). Then it is sent, then the item is deleted. The claim of a send that failed, or of a
   * process that died before it deleted the item, lapses after a minute, and the alert can be
   * retried again (sent twice if the send had gone through, never lost).
   */
  async #resend(failed: AlertRecord<'failed'>): Promise<boolean> {
    if (!(await this.#failed.claim(failed.jobId))) return false;
    const { jobId, tries: _tries, succeeded, error: _error, failedAt: _at, ...entry } = failed;
    await this.#lines?.requeue(entry);
    await this.#send(messageOf(entry, 0, succeeded), 0);
    await this.#failed.remove(jobId);
    return true;
  }

  async counts(): Promise<QueueCounts> {
    const [{ Attributes: a = {} }, failed] = await Promise.all([
      this.#aws.sqs<{ Attributes?: Record<string, string> }>('GetQueueAttributes', {
        QueueUrl: this.queueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
      this.#failed.all(),
    ]);
    return {
      waiting: Number(a.ApproximateNumberOfMessages ?? 0),
      active: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
      failed: failed.length,
      completed: 0,
    };
  }

  async depth(): Promise<number> {
    const { waiting, delayed } = await this.counts();
    return waiting + delayed;
  }

  async health(): Promise<QueueHealth> {
    const { dedupeTable, failedTable } = this.#options;
    const checks: [string, Promise<unknown>][] = [
      ['SQS', this.#aws.sqs('GetQueueAttributes', { QueueUrl: this.queueUrl })],
      [`DynamoDB table ${dedupeTable}`, this.#identities.ping()],
      [`DynamoDB table ${failedTable}`, this.#failed.all('-')],
    ];
    const errors = await Promise.all(
      checks.map(([what, check]) =>
        withTimeout(check, HEALTH_TIMEOUT_MS, 'No answer').then(
          () => '',
          (error: unknown) => `${what}: ${describeError(error)}`,
        ),
      ),
    );
    const error = errors.filter(Boolean).join('; ');
    return error === '' ? { reachable: true } : { reachable: false, error };
  }

  #log(message: string, fields: Record<string, unknown>): void {
    const logger = this.#processor?.logger;
    if (logger === undefined) console.error(`[churn-risk] ${message}`, fields);
    else logger.error(fields, message);
  }
}

/**
 * Durable processing on AWS Lambda: an accepted alert's identity is claimed in
 * DynamoDB and the alert sent to SQS before the `202`; the same function (or another one),
 * invoked by the queue's event source mapping, runs core's try protocol on each message: a retry
 * is a new message with the record of handlers that succeeded and core's delay, and after the
 * last try `onError` is called once and the alert goes to the failed table. Needs
 * `@aws-sdk/client-sqs` and `@aws-sdk/client-dynamodb` (Lambda's Node runtimes ship both). An
 * unknown option is a `TypeError` naming the closest known one.
 *
 * @example
 * const queue = createSqsQueue({
 *   queueUrl: process.env.QUEUE_URL!,
 *   dedupeTable: process.env.DEDUPE_TABLE!,
 *   failedTable: process.env.FAILED_TABLE!,
 * });
 * const receiver = createReceiver({ secret: process.env.CHURN_RISK_WEBHOOK_SECRET!, queue });
 * receiver.on('churn_risk_alert', createCrmTask, { id: 'crm-task' });
 * export const handler = createLambdaHandler(receiver); // function URL and SQS events
 */
export function createSqsQueue(options: SqsQueueOptions): SqsQueue {
  return new SqsQueueMode(resolveSqsQueueOptions(options));
}
