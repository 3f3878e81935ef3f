import type { Receiver } from '@churn-risk/core';
import { pushQueueContract, type ReceiverPlatform } from '@churn-risk/core/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  startAwsEmulators,
  type AwsEmulators,
  type TestQueue,
  type TestTables,
} from '../../../../test/support/aws/emulators.js';
import {
  queueDrained,
  startEventSourceMapping,
} from '../../../../test/support/aws/event-source-mapping.js';
import { createDynamoOrder, createLambdaHandler, createSqsQueue, type SqsQueue } from '../index.js';

// Core's push-queue contract against queue mode, with two consumers (two receivers, as
// two function instances, each invoked by its own local event source mapping) on one SQS queue,
// on fauxqs and dynalite. Every queue has order per user (`createDynamoOrder`), which the
// contract's order cases use (its other cases run without `order: 'per-user'`).

let aws: AwsEmulators;

beforeAll(async () => {
  aws = await startAwsEmulators();
});

afterAll(async () => {
  await aws.stop();
});

type Where = TestQueue & TestTables;

/** One queue and its tables, shared by every instance made by `queue()`. */
class SqsPlatform implements ReceiverPlatform {
  readonly #queues: SqsQueue[] = [];
  readonly #where: Where;

  constructor(where: Where) {
    this.#where = where;
  }

  queue(): SqsQueue {
    const { queueUrl, dedupeTable, failedTable } = this.#where;
    const queue = createSqsQueue({
      queueUrl,
      dedupeTable,
      failedTable,
      sqs: aws.sqs,
      dynamodb: aws.dynamodb,
      order: createDynamoOrder({ waitMs: 1_000 }),
    });
    this.#queues.push(queue);
    return queue;
  }

  /** Runs a mapping per receiver (its instance's handler) until the queue is empty. */
  async settle(receivers: readonly Receiver[]): Promise<void> {
    const { queueUrl, queueArn } = this.#where;
    const mappings = receivers.map((receiver) =>
      startEventSourceMapping({
        sqs: aws.sqs,
        queueUrl,
        queueArn,
        batchSize: 5,
        handler: createLambdaHandler(receiver),
      }),
    );
    try {
      await queueDrained(() => aws.messages(queueUrl), 25_000);
    } finally {
      await Promise.all(mappings.map((mapping) => mapping.stop()));
    }
  }

  failed(): ReturnType<SqsQueue['failed']> {
    return (this.#queues[0] as SqsQueue).failed();
  }

  retry(id: string): Promise<void> {
    const queue = this.#queues[1] ?? this.#queues[0];
    return queue === undefined ? Promise.reject(new Error('no queue')) : queue.retry(id);
  }

  #retryAlls = 0;
  /** From each consumer's queue in turn. */
  retryAll(): Promise<number> {
    const queue = this.#queues[this.#retryAlls++ % this.#queues.length];
    return queue === undefined ? Promise.reject(new Error('no queue')) : queue.retryAll();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

pushQueueContract(
  { describe, it },
  {
    name: 'sqs queue mode (two consumers on one queue)',
    create: async (scope) => {
      const name = scope.replace(/[^a-zA-Z0-9-]/g, '-');
      const queue = await aws.createQueue(name, 5);
      return new SqsPlatform({ ...queue, ...(await aws.createTables(name)) });
    },
    timeoutMs: 60_000,
  },
);
