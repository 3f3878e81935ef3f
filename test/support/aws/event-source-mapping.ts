/**
 * A local stand-in for Lambda's SQS event source mapping, for queue mode's tests: it long-polls
 * the queue, builds each batch into the event Lambda sends (`messageId`, `receiptHandle`, `body`,
 * `attributes.ApproximateReceiveCount`, `eventSource`, `eventSourceARN`; up to 10 records),
 * invokes the handler, and deletes every record its `batchItemFailures` does not list, as
 * `FunctionResponseTypes: [ReportBatchItemFailures]` does. A handler that throws, or answers an
 * identifier that is not in the batch, fails the whole batch: nothing is deleted, and SQS hands
 * the records out again once their visibility timeout ends.
 */
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { SqsBatchResponse, SqsEvent, SqsRecord } from '@churn-risk/lambda';
import { AWS_REGION, sqsSdk } from './sdk.js';

const { DeleteMessageBatchCommand, ReceiveMessageCommand } = sqsSdk;

/** What the mapping invokes: a Lambda handler as `createLambdaHandler` returns it. */
export type SqsInvoke = (event: SqsEvent) => Promise<SqsBatchResponse | undefined>;

export interface EventSourceMappingOptions {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  handler: SqsInvoke;
  /** Records per invocation, 1 to 10. Default 10. */
  batchSize?: number;
  /** Seconds each receive waits for messages. Default 1. */
  waitTimeSeconds?: number;
  /** Called with each event before the handler gets it. */
  onBatch?: (event: SqsEvent) => void;
}

/** A running mapping. */
export interface EventSourceMapping {
  /** Invocations so far, and how many ended with records left to SQS. */
  readonly invocations: number;
  /** Stops polling once the current receive or invocation ended. */
  stop(): Promise<void>;
}

/** The record Lambda builds from a received message. */
export function recordOf(message: Message, queueArn: string): SqsRecord {
  const received = message.Attributes ?? {};
  const attributes = {
    ApproximateReceiveCount: received.ApproximateReceiveCount ?? '1',
    SentTimestamp: received.SentTimestamp ?? '',
    SenderId: received.SenderId ?? '',
    ApproximateFirstReceiveTimestamp: received.ApproximateFirstReceiveTimestamp ?? '',
  };
  const record = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes,
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: AWS_REGION,
  };
  return record;
}

/** The receipt handles to delete after an invocation: none when it failed as a whole. */
function toDelete(event: SqsEvent, outcome: SqsBatchResponse | undefined | Error): string[] {
  if (outcome instanceof Error) return [];
  const failures = outcome?.batchItemFailures ?? [];
  const ids = new Set(event.Records.map((record) => record.messageId));
  if (failures.some((failure) => !ids.has(failure.itemIdentifier))) return [];
  const again = new Set(failures.map((failure) => failure.itemIdentifier));
  return event.Records.filter((record) => !again.has(record.messageId)).map(
    (record) => record.receiptHandle ?? '',
  );
}

/** Starts polling `queueUrl` and invoking `handler`, one batch at a time. */
export function startEventSourceMapping(options: EventSourceMappingOptions): EventSourceMapping {
  const { sqs, queueUrl, queueArn, handler } = options;
  let stopped = false;
  let invocations = 0;
  const loop = async (): Promise<void> => {
    while (!stopped) {
      let messages: Message[];
      try {
        ({ Messages: messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            WaitTimeSeconds: options.waitTimeSeconds ?? 1,
            MessageSystemAttributeNames: ['All'],
          }),
        ));
      } catch {
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      if (messages.length === 0) continue;
      const event: SqsEvent = { Records: messages.map((m) => recordOf(m, queueArn)) };
      options.onBatch?.(event);
      invocations++;
      const outcome = await handler(event).catch((error: unknown) =>
        error instanceof Error ? error : new Error(String(error)),
      );
      const handles = toDelete(event, outcome);
      if (handles.length === 0) continue;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: handles.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle })),
        }),
      );
    }
  };
  const running = loop();
  return {
    get invocations() {
      return invocations;
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/**
 * Resolves once the queue has no visible, in-flight or delayed message, twice in a row 100 ms
 * apart: every alert sent to it has reached its end (a retry is sent before its record is
 * deleted, so a queue that is empty holds no alert on its way).
 */
export async function queueDrained(
  messages: () => Promise<{ visible: number; inFlight: number; delayed: number }>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let emptyInARow = 0;
  while (emptyInARow < 2) {
    const { visible, inFlight, delayed } = await messages();
    emptyInARow = visible + inFlight + delayed === 0 ? emptyInARow + 1 : 0;
    if (Date.now() > deadline) {
      throw new Error(
        `The queue did not drain within ${timeoutMs} ms (${visible} visible, ${inFlight} in flight, ${delayed} delayed).`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
