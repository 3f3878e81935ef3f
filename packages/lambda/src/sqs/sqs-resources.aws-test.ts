import { createReceiver, type Logger, type Receiver } from '@churn-risk/core';
import { describe, expect, it } from 'vitest';
import {} from '../../../../test/support/aws/emulators.js';
import {
  queueDrained,
  startEventSourceMapping,
} from '../../../../test/support/aws/event-source-mapping.js';
import { emulatedAws, signedFunctionUrlEvent } from './emulated-aws.test-util.js';
import { runFailedCli } from '../cli/failed-cli.js';
import { createLambdaHandler, SqsQueueError, type HttpApiEvent, type SqsQueue } from '../index.js';

// Queue mode given a queue or a table that does not exist, and queue URLs in every form the AWS
// SDK sends: on fauxqs and dynalite in this process, on free ports of 127.0.0.1. This fauxqs
// makes its queue URLs on the host 127.0.0.1, as its CLI does with FAUXQS_HOST=127.0.0.1:
// `http://sqs.us-east-1.127.0.0.1:<port>/000000000000/<name>`.

const SECRET = 'whsec_sqs_resources';
const { aws, place, queueOn, receivers } = emulatedAws('resources', { queueHost: '127.0.0.1' });

/** A logger that keeps each line's fields and message. */
function recording(): { logger: Logger; lines: { fields: unknown; message: string }[] } {
  const lines: { fields: unknown; message: string }[] = [];
  const keep = (fields: unknown, message?: string): void => {
    lines.push({ fields, message: message ?? '' });
  };
  return { logger: { debug: keep, info: keep, warn: keep, error: keep }, lines };
}

function receiverOn(queue: SqsQueue, logger: Logger): Receiver {
  const receiver = createReceiver({
    secret: SECRET,
    queue,
    retries: { retries: 0, backoffMs: () => 5 },
    logger,
  });
  receivers.push(receiver);
  return receiver;
}

function functionUrlEvent(userId: string, triggeredAt?: string): HttpApiEvent {
  const alert = triggeredAt === undefined ? { userId } : { userId, triggeredAt };
  return signedFunctionUrlEvent(alert, SECRET);
}

/** The rejection of `promise` (a failure when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('resolved'),
    (error: unknown) => error,
  );
}

describe('a queue or a table that does not exist', () => {
  it('a wrong dedupeTable: the delivery answers 503 and the log names the option, the table and the fix', async () => {
    const where = await place();
    const { logger, lines } = recording();
    const queue = queueOn(where, { dedupeTable: 'no-such-identities' });
    const answer = await createLambdaHandler(receiverOn(queue, logger))(
      functionUrlEvent('user_no_dedupe_table'),
    );
    expect(answer.statusCode).toBe(503);
    expect(answer.body).not.toContain('no-such-identities');
    const line = lines.find(({ message }) => message.includes('The queue store failed'));
    expect(line?.message).toContain(
      "The DynamoDB table no-such-identities (createSqsQueue's `dedupeTable`) does not exist in " +
        "the DynamoDB client's account and region (ResourceNotFoundException): create it, or set " +
        '`dedupeTable` to an existing one.',
    );
    const err = (line?.fields as { err?: unknown } | undefined)?.err;
    expect(err).toBeInstanceOf(SqsQueueError);
    expect(err).toMatchObject({
      code: 'TABLE_NOT_FOUND',
      option: 'dedupeTable',
      resource: 'no-such-identities',
      awsError: 'ResourceNotFoundException',
    });
    expect(await aws().messages(where.queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    const health = await queue.health();
    expect(health.error).toContain(
      "SqsQueueError: The DynamoDB table no-such-identities (createSqsQueue's `dedupeTable`)",
    );
  });

  it('a wrong failedTable: the failed set rejects naming it, and a failed alert is delivered again, not lost', async () => {
    const where = await place();
    const { logger, lines } = recording();
    const queue = queueOn(where, { failedTable: 'no-such-failed' });
    const error = await rejectionOf(queue.failed());
    expect(error).toBeInstanceOf(SqsQueueError);
    expect(error).toMatchObject({
      name: 'SqsQueueError',
      code: 'TABLE_NOT_FOUND',
      option: 'failedTable',
      resource: 'no-such-failed',
    });
    expect((error as Error).message).toBe(
      "The DynamoDB table no-such-failed (createSqsQueue's `failedTable`) does not exist in the " +
        "DynamoDB client's account and region (ResourceNotFoundException): create it, or set " +
        '`failedTable` to an existing one.',
    );
    await expect(queue.retryAll()).rejects.toMatchObject({ option: 'failedTable' });
    // The consumer: an alert whose last try failed cannot be stored, so its record is returned
    // in batchItemFailures (delivered again), and the log says why.
    const receiver = receiverOn(queue, logger);
    receiver.on('churn_risk_alert', () => {
      throw new Error('CRM down');
    });
    const handler = createLambdaHandler(receiver);
    expect((await handler(functionUrlEvent('user_no_failed_table'))).statusCode).toBe(202);
    const failures: number[] = [];
    const mapping = startEventSourceMapping({
      sqs: aws().sqs,
      queueUrl: where.queueUrl,
      queueArn: where.queueArn,
      handler: async (event) => {
        const response = await handler(event);
        failures.push(response.batchItemFailures.length);
        return response;
      },
    });
    try {
      const deadline = Date.now() + 15_000;
      while (failures.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await mapping.stop();
    }
    expect(failures[0]).toBe(1);
    expect(lines.map(({ message }) => message).join('\n')).toContain(
      "could not be written (SqsQueueError: The DynamoDB table no-such-failed (createSqsQueue's " +
        '`failedTable`) does not exist',
    );
  });

  it('a wrong queueUrl: the delivery answers 503, claims nothing, and the error names the queue and queueUrl', async () => {
    const where = await place();
    const missing = where.queueUrl.replace(/[^/]+$/, 'no-such-queue');
    const { logger, lines } = recording();
    const queue = queueOn(where, { queueUrl: missing });
    const answer = await createLambdaHandler(receiverOn(queue, logger))(
      functionUrlEvent('user_no_queue', '2026-03-02T10:00:00.000Z'),
    );
    expect(answer.statusCode).toBe(503);
    const line = lines.find(({ message }) => message.includes('The queue store failed'));
    expect(line?.message).toContain(
      `The SQS queue ${missing} (createSqsQueue's \`queueUrl\`) does not exist in the SQS ` +
        "client's account and region (QueueDoesNotExist): create it, or set `queueUrl` to an " +
        'existing one.',
    );
    expect((line?.fields as { err?: unknown } | undefined)?.err).toMatchObject({
      code: 'QUEUE_NOT_FOUND',
      option: 'queueUrl',
      resource: missing,
    });
    // The claim was released: the same alert through the right queue is accepted.
    const retried = await createLambdaHandler(receiverOn(queueOn(where), logger))(
      functionUrlEvent('user_no_queue', '2026-03-02T10:00:00.000Z'),
    );
    expect(retried.body).toBe('{"received":true}');
    const error = await rejectionOf(queue.counts());
    expect(error).toBeInstanceOf(SqsQueueError);
    expect(error).toMatchObject({ code: 'QUEUE_NOT_FOUND', awsError: 'QueueDoesNotExist' });
    const health = await queue.health();
    expect(health.error).toContain(`SQS: SqsQueueError: The SQS queue ${missing}`);
  });

  it('churn-risk-sqs names the flag, the table or the queue, and the fix; exit 1', async () => {
    const where = await place();
    const saved = { ...process.env };
    Object.assign(process.env, aws().env);
    const run = async (args: string[]): Promise<{ code: number; out: string; err: string }> => {
      let out = '';
      let err = '';
      const code = await runFailedCli(args, {
        out: (text) => (out += text),
        err: (text) => (err += text),
      });
      return { code, out, err };
    };
    try {
      const noTable = await run([
        'failed',
        'list',
        '--queue-url',
        where.queueUrl,
        '--table',
        'no-such-table',
      ]);
      expect(noTable).toEqual({
        code: 1,
        out: '',
        err:
          'churn-risk-sqs: The DynamoDB table no-such-table (--table) does not exist in the ' +
          "DynamoDB client's account and region (ResourceNotFoundException): create it, or set " +
          `--table to an existing one. (SQS and DynamoDB at ${where.queueUrl}).\n`,
      });
      const missing = where.queueUrl.replace(/[^/]+$/, 'no-such-queue');
      const noQueue = await run([
        'failed',
        'list',
        '--queue-url',
        missing,
        '--table',
        where.failedTable,
      ]);
      expect(noQueue.code).toBe(1);
      expect(noQueue.err).toContain(
        `churn-risk-sqs: The SQS queue ${missing} (--queue-url) does not exist`,
      );
      expect(noQueue.err).toContain('create it, or set --queue-url to an existing one.');
    } finally {
      for (const key of Object.keys(aws().env)) {
        if (saved[key] === undefined) Reflect.deleteProperty(process.env, key);
        else process.env[key] = saved[key];
      }
    }
  });
});

describe('queue URLs as the AWS SDK takes them', () => {
  it("carries an alert through a queue whose URL has an emulator's host (sqs.us-east-1.127.0.0.1)", async () => {
    const where = await place();
    expect(where.queueUrl).toMatch(
      /^http:\/\/sqs\.us-east-1\.127\.0\.0\.1:\d+\/000000000000\/resources-\d+$/,
    );
    expect(() => new URL(where.queueUrl)).toThrow(TypeError); // why it needs its own reading
    const { logger } = recording();
    const queue = queueOn(where);
    expect(queue.queueUrl).toBe(where.queueUrl);
    const receiver = receiverOn(queue, logger);
    const handled: string[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      handled.push(alert.userId);
    });
    const handler = createLambdaHandler(receiver);
    expect((await handler(functionUrlEvent('user_emulator_host'))).statusCode).toBe(202);
    const mapping = startEventSourceMapping({
      sqs: aws().sqs,
      queueUrl: where.queueUrl,
      queueArn: where.queueArn,
      handler: (event) => handler(event),
    });
    try {
      await queueDrained(() => aws().messages(where.queueUrl), 30_000);
    } finally {
      await mapping.stop();
    }
    expect(handled).toEqual(['user_emulator_host']);
    expect(await queue.counts()).toMatchObject({ waiting: 0, failed: 0 });
  });
});
