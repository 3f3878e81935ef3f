/**
 * The parts of Lambda's SQS event and its partial batch response that queue mode reads and writes,
 * as structural types: `SQSEvent` and `SQSBatchResponse` of `@types/aws-lambda` fit them.
 */

/** One message of an SQS event. */
export interface SqsRecord {
  messageId: string;
  receiptHandle?: string | undefined;
  /** The message body: an alert message written by this package's producer. */
  body: string;
  attributes: {
    /** How often SQS has handed out the message, this delivery included. */
    ApproximateReceiveCount: string;
  };
  /** `aws:sqs`: how the handler tells an SQS event from an HTTP one. */
  eventSource: string;
  /** `arn:aws:sqs:<region>:<account>:<name>`: which queue the message came from. */
  eventSourceARN: string;
}

/** The event an SQS event source mapping invokes the function with (up to 10 records). */
export interface SqsEvent {
  Records: SqsRecord[];
}

/**
 * The partial batch response: the messages to deliver again (`ReportBatchItemFailures` on the
 * event source mapping); every other message of the batch is deleted from the queue.
 */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** True for an SQS event: records that all came from SQS. */
export function isSqsEvent(event: unknown): event is SqsEvent {
  if (typeof event !== 'object' || event === null) return false;
  const { Records: records } = event as { Records?: unknown };
  return (
    Array.isArray(records) &&
    records.length > 0 &&
    records.every(
      (record: unknown) =>
        typeof record === 'object' &&
        record !== null &&
        (record as { eventSource?: unknown }).eventSource === 'aws:sqs',
    )
  );
}

/** `<account>/<name>` of an SQS ARN, as `SqsQueueOptions` keys a queue URL. */
export function queueKeyOfArn(arn: string): string {
  const parts = arn.split(':');
  return `${parts[4] ?? ''}/${parts[5] ?? ''}`;
}

/**
 * Refuses, with a `TypeError`, an event holding a record of another queue than the one at
 * `queueUrl` (keyed `queueKey`): a queue consumes only its own messages, so a function whose event
 * source mapping and `createSqsQueue({ queueUrl })` name different queues fails loudly rather than
 * running another queue's messages under this queue's verdicts.
 */
export function refuseOtherQueues(event: SqsEvent, queueKey: string, queueUrl: string): void {
  const other = event.Records.find((record) => queueKeyOfArn(record.eventSourceARN) !== queueKey);
  if (other === undefined) return;
  throw new TypeError(
    `An SQS event from ${other.eventSourceARN}, not from the receiver's queue (${queueUrl}): give ` +
      "createSqsQueue({ queueUrl }) the event source mapping's queue.",
  );
}
