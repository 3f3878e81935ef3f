import { createReceiver, type Receiver, type RetryOptions } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  startAwsEmulators,
  type AwsEmulatorOptions,
  type AwsEmulators,
  type TestQueue,
  type TestTables,
} from '../../../../test/support/aws/emulators.js';
import { quietLogger } from '../../../../test/support/quiet-logger.js';
import {
  createSqsQueue,
  type HttpApiEvent,
  type SqsQueue,
  type SqsQueueOptions,
} from '../index.js';

/**
 * Test support for queue mode's tests on fauxqs and dynalite (`*.aws-test.ts`): the emulators of
 * the test file, fresh queues and tables, the receivers made by a test closed after it, and the
 * queue mode of a place.
 */

/** A queue and its two tables. */
export type Place = TestQueue & TestTables;

/** A function URL event carrying a delivery of `alert` signed with `secret`. */
export function signedFunctionUrlEvent(
  alert: Parameters<typeof createTestDelivery>[0],
  secret: string,
): HttpApiEvent {
  const { headers, body } = createTestDelivery(alert, { secret });
  return {
    version: '2.0',
    headers,
    body,
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST' } },
  };
}

export interface EmulatedAws {
  /** The file's emulators (started before its tests, stopped after them). */
  aws: () => AwsEmulators;
  /** A fresh queue (visibility timeout in seconds) and its two tables, named `<prefix>-<n>`. */
  place: (visibilityTimeoutS?: number) => Promise<Place>;
  /** Queue mode on `where`, with the emulators' shared clients unless `options` has others. */
  queueOn: (where: Place, options?: Partial<SqsQueueOptions>) => SqsQueue;
  /** The receivers closed after each test: push each receiver a test makes. */
  receivers: Receiver[];
  /** A receiver on `queue` (closed after the test) that logs nothing; a count of retries backs off 5 ms. */
  receiverOn: (
    queue: SqsQueue,
    options: { secret: string; retries: number | RetryOptions; order?: 'per-user' },
  ) => Receiver;
}

/**
 * Starts the emulators before the file's tests and stops them after; closes the receivers of
 * each test after it. Places are named `<prefix>-<n>`.
 */
export function emulatedAws(prefix: string, options: AwsEmulatorOptions = {}): EmulatedAws {
  let aws: AwsEmulators | undefined;
  let places = 0;
  const receivers: Receiver[] = [];
  const started = (): AwsEmulators => {
    if (aws === undefined) throw new Error('the emulators have not started: use them in a test');
    return aws;
  };

  beforeAll(async () => {
    aws = await startAwsEmulators(options);
  });

  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close({ timeoutMs: 10_000 })));
  });

  afterAll(async () => {
    await aws?.stop();
  });

  return {
    aws: started,
    async place(visibilityTimeoutS = 5) {
      const name = `${prefix}-${String(++places)}`;
      return {
        ...(await started().createQueue(name, visibilityTimeoutS)),
        ...(await started().createTables(name)),
      };
    },
    queueOn(where, queueOptions = {}) {
      const { queueUrl, dedupeTable, failedTable } = where;
      return createSqsQueue({
        queueUrl,
        dedupeTable,
        failedTable,
        sqs: started().sqs,
        dynamodb: started().dynamodb,
        ...queueOptions,
      });
    },
    receivers,
    receiverOn(queue, { secret, retries, order }) {
      const receiver = createReceiver({
        secret,
        queue,
        ...(order === undefined ? {} : { order }),
        retries: typeof retries === 'number' ? { retries, backoffMs: () => 5 } : retries,
        logger: quietLogger,
      });
      receivers.push(receiver);
      return receiver;
    },
  };
}
