import type { SqsBatchResponse, SqsEvent } from './sqs-events.js';
import { queueKeyOfArn } from './sqs-events.js';
import { sqsDispatch } from './sqs-dispatch.js';

/** What `createLambdaHandler` hands an SQS event to. */
export interface SqsConsumer {
  /** `<account>/<name>` of the queue it consumes. */
  readonly queueKey: string;
  readonly queueUrl: string;
  handleSqsEvent(event: SqsEvent): Promise<SqsBatchResponse>;
}

/** The SQS queues given to a receiver in this process (`attach`), until closed. */
const attached = new Set<SqsConsumer>();

/**
 * Registers a queue; from then on `createLambdaHandler` dispatches SQS events through
 * `consumerOf` (left out of a bundle that never makes an SQS queue).
 */
export function register(consumer: SqsConsumer): void {
  attached.add(consumer);
  sqsDispatch.find = consumerOf;
}

export function unregister(consumer: SqsConsumer): void {
  attached.delete(consumer);
}

/**
 * The queue of this process whose messages `event` holds (by its records' `eventSourceARN`). A
 * `TypeError` when none is, or when two are (two receivers on one queue in one process: give
 * `createLambdaHandler` the one to use).
 */
function consumerOf(event: SqsEvent): SqsConsumer {
  const arn = event.Records[0]?.eventSourceARN ?? '';
  const key = queueKeyOfArn(arn);
  const found = [...attached].filter((consumer) => consumer.queueKey === key);
  if (found.length === 1 && found[0] !== undefined) return found[0];
  if (found.length > 1) {
    throw new TypeError(
      `Two receivers of this process use the SQS queue ${arn}: pass the one to consume with to ` +
        'createLambdaHandler(receiver, { queue }).',
    );
  }
  const known = [...attached].map((consumer) => consumer.queueUrl).join(', ') || 'none';
  throw new TypeError(
    `An SQS event from ${arn}, which no receiver of this function consumes (its SQS queues: ` +
      `${known}). Give the receiver's createSqsQueue({ queueUrl }) that queue's URL.`,
  );
}
