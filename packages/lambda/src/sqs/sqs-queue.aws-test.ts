import {
  AlertStalledError,
  type AlertContext,
  type Receiver,
  type RetryOptions,
} from '@churn-risk/core';
import { describe, expect, it } from 'vitest';
import { dynamoDbSdk } from '../../../../test/support/aws/emulators.js';
import {
  queueDrained,
  startEventSourceMapping,
} from '../../../../test/support/aws/event-source-mapping.js';
import { emulatedAws, signedFunctionUrlEvent, type Place } from './emulated-aws.test-util.js';
import {
  createLambdaHandler,
  createSqsQueue,
  type AwsSdkClient,
  type HttpApiEvent,
  type SqsBatchResponse,
  type SqsEvent,
  type SqsQueue,
  type SqsQueueOptions,
  type SqsRecord,
} from '../index.js';
import { runFailedCli } from '../cli/failed-cli.js';
import { delaySecondsOf } from './sqs-message.js';

// Queue mode on real emulators: fauxqs for SQS and dynalite for DynamoDB, in this
// process on free ports of 127.0.0.1. The consumer is driven by the local event source mapping of
// test/support/aws, which invokes the Lambda handler with the events Lambda would send.

const { GetItemCommand, PutItemCommand, DynamoDBClient } = dynamoDbSdk;
const SECRET = 'whsec_sqs_queue';
const emulated = emulatedAws('sqs-case');
const { aws, place, queueOn } = emulated;

const receiverOn = (queue: SqsQueue, retries: number | RetryOptions = 2): Receiver =>
  emulated.receiverOn(queue, { secret: SECRET, retries });

/** A function URL event carrying a signed delivery of an alert for `userId`. */
function functionUrlEvent(userId: string, triggeredAt?: string): HttpApiEvent {
  const alert = triggeredAt === undefined ? { userId } : { userId, triggeredAt };
  return signedFunctionUrlEvent(alert, SECRET);
}

/** Runs the event source mapping on `where` until the queue is empty. */
async function drain(
  where: Place,
  invoke: (event: SqsEvent) => Promise<SqsBatchResponse | undefined>,
  responses: SqsBatchResponse[] = [],
): Promise<void> {
  const mapping = startEventSourceMapping({
    sqs: aws().sqs,
    queueUrl: where.queueUrl,
    queueArn: where.queueArn,
    handler: async (event) => {
      const response = await invoke(event);
      if (response !== undefined) responses.push(response);
      return response;
    },
  });
  try {
    await queueDrained(() => aws().messages(where.queueUrl), 30_000);
  } finally {
    await mapping.stop();
  }
}

/** A command as the test clients look at it. */
interface SeenCommand {
  constructor: { name: string };
  input: unknown;
}

/** An SDK client that sends through `client`, after `look` saw the command (and may refuse it). */
function watched(
  client: { send(command: never): Promise<unknown> },
  look: (command: SeenCommand) => void,
): AwsSdkClient {
  return {
    send: async (command: SeenCommand) => {
      look(command);
      return client.send(command as never);
    },
  };
}

/** An SDK client whose commands named `name` fail while `fails()` says so. */
function failing(
  client: { send(command: never): Promise<unknown> },
  name: string,
  fails: (command: SeenCommand) => boolean,
): AwsSdkClient {
  return watched(client, (command) => {
    if (command.constructor.name === name && fails(command))
      throw new Error(`${name} refused (test)`);
  });
}

describe('createSqsQueue', () => {
  it('handles a delivery whose handler fails twice then succeeds once; a redelivery to another producer answers duplicate', async () => {
    const where = await place();
    const producer = receiverOn(queueOn(where));
    const other = receiverOn(queueOn(where));
    const attempts: number[] = [];
    const errors: unknown[] = [];
    for (const receiver of [producer, other]) {
      receiver.on('churn_risk_alert', (_alert, { attempt }: AlertContext) => {
        attempts.push(attempt);
        if (attempt < 2) throw new Error('CRM down');
      });
      receiver.onError((error) => void errors.push(error));
    }
    const event = functionUrlEvent('user_sqs_flaky');
    const handler = createLambdaHandler(producer);
    const answer = await handler(event);
    expect([answer.statusCode, answer.body]).toEqual([202, '{"received":true}']);
    const again = await createLambdaHandler(other)(event);
    expect([again.statusCode, again.body]).toEqual([202, '{"received":true,"duplicate":true}']);

    await drain(where, (sqsEvent) => handler(sqsEvent));
    expect(attempts).toEqual([0, 1, 2]);
    expect(errors).toEqual([]);
    expect(await producer.health()).toMatchObject({ ok: true, queue: { reachable: true } });
  });

  it('claims an expired identity again before a TTL deletes it, and sets the TTL attribute (dynalite has no TTL)', async () => {
    const where = await place();
    const receiver = receiverOn(queueOn(where, { dedupeTtlMs: 3_600_000 }));
    const handler = createLambdaHandler(receiver);
    const triggeredAt = '2026-03-01T10:00:00.000Z';
    const before = Math.floor(Date.now() / 1000);
    expect((await handler(functionUrlEvent('user_sqs_ttl', triggeredAt))).statusCode).toBe(202);
    const key = { pk: { S: `user_sqs_ttl:${triggeredAt}` } };
    const { Item } = await aws().dynamodb.send(
      new GetItemCommand({ TableName: where.dedupeTable, Key: key, ConsistentRead: true }),
    );
    // The TTL attribute: epoch seconds, an hour ahead (DynamoDB's TTL deletes by it).
    const expiresAt = Number(Item?.expiresAt?.N);
    expect(expiresAt - before).toBeGreaterThanOrEqual(3599);
    expect(expiresAt - before).toBeLessThanOrEqual(3601 + 60);
    // A claim whose time is over, still in the table (dynalite never deletes it; DynamoDB's TTL
    // deletes within days): the redelivery is accepted, not a duplicate.
    await aws().dynamodb.send(
      new PutItemCommand({
        TableName: where.dedupeTable,
        Item: { ...key, expiresAt: { N: String(before - 10) }, claim: { S: 'old' } },
      }),
    );
    const answer = await handler(functionUrlEvent('user_sqs_ttl', triggeredAt));
    expect(answer.body).toBe('{"received":true}');
    // A live claim: a duplicate, told by the refused condition alone (dynalite returns no old item).
    expect((await handler(functionUrlEvent('user_sqs_ttl', triggeredAt))).body).toBe(
      '{"received":true,"duplicate":true}',
    );
    expect((await aws().messages(where.queueUrl)).visible).toBe(2);
  });

  it('stores the always-failing alert in the failed table with onError once; retry(id) runs only the failed handler', async () => {
    const where = await place();
    const queue = queueOn(where);
    const receiver = receiverOn(queue, 1);
    let broken = true;
    const runs = { audit: 0, crm: 0 };
    const errors: [string, number][] = [];
    receiver.on(
      'churn_risk_alert',
      () => {
        runs.audit++;
      },
      { id: 'audit' },
    );
    receiver.on(
      'churn_risk_alert',
      () => {
        runs.crm++;
        if (broken) throw new Error('CRM down');
      },
      { id: 'crm' },
    );
    receiver.onError((error, _alert, context) => {
      errors.push([error instanceof Error ? error.message : String(error), context.attempt]);
    });
    const handler = createLambdaHandler(receiver);
    expect((await handler(functionUrlEvent('user_sqs_failing_1'))).statusCode).toBe(202);
    expect((await handler(functionUrlEvent('user_sqs_failing_2'))).statusCode).toBe(202);
    await drain(where, (event) => handler(event));
    expect(errors).toEqual([
      ['CRM down', 1],
      ['CRM down', 1],
    ]);
    expect(runs).toEqual({ audit: 2, crm: 4 });

    const failed = await queue.failed();
    expect(failed.map((f) => [f.alert.userId, f.tries, f.succeeded])).toHaveLength(2);
    expect(failed[0]?.error).toMatch(/crm/);
    expect(failed[0]?.succeeded).toEqual(['audit']);
    // Newest first.
    expect(failed.map((f) => f.failedAt ?? 0)).toEqual(
      failed.map((f) => f.failedAt ?? 0).sort((a, b) => b - a),
    );
    expect(await queue.failed({ limit: 1, offset: 1 })).toEqual([failed[1]]);
    expect(await queue.counts()).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 2,
      completed: 0,
    });

    broken = false;
    const [first, second] = failed;
    await queue.retry(first?.jobId ?? '');
    await expect(queue.retry(first?.jobId ?? '')).rejects.toThrow(TypeError);
    expect(await queue.depth()).toBe(1);
    await drain(where, (event) => handler(event));
    expect(runs).toEqual({ audit: 2, crm: 5 });
    // By alert identity too; then nothing is left.
    await queue.retry(second?.id ?? '');
    await drain(where, (event) => handler(event));
    expect(runs).toEqual({ audit: 2, crm: 6 });
    expect(await queue.failed()).toEqual([]);
    expect(errors).toHaveLength(2);
  });

  it('answers 503 OVERLOADED when the send is refused, and claims nothing', async () => {
    const where = await place();
    const refusing = queueOn(where, {
      sqs: failing(aws().sqs, 'SendMessageCommand', () => true),
    });
    const refused = await createLambdaHandler(receiverOn(refusing))(
      functionUrlEvent('user_sqs_refused', '2026-03-02T10:00:00.000Z'),
    );
    expect(refused.statusCode).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'OVERLOADED' } });
    expect(refused.headers['retry-after']).toBeDefined();
    const { Item } = await aws().dynamodb.send(
      new GetItemCommand({
        TableName: where.dedupeTable,
        Key: { pk: { S: 'user_sqs_refused:2026-03-02T10:00:00.000Z' } },
        ConsistentRead: true,
      }),
    );
    expect(Item).toBeUndefined();
    expect(await aws().messages(where.queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    // The sender's retry, to a producer whose send works, is accepted (not a duplicate).
    const retried = await createLambdaHandler(receiverOn(queueOn(where)))(
      functionUrlEvent('user_sqs_refused', '2026-03-02T10:00:00.000Z'),
    );
    expect(retried.body).toBe('{"received":true}');
  });

  it('answers 503 when DynamoDB does not answer, and health() names what is down', async () => {
    const where = await place();
    const down = new DynamoDBClient({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    const queue = queueOn(where, { dynamodb: down, enqueueTimeoutMs: 5_000 });
    const receiver = receiverOn(queue);
    const answer = await createLambdaHandler(receiver)(functionUrlEvent('user_sqs_ddb_down'));
    expect(answer.statusCode).toBe(503);
    expect(await aws().messages(where.queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    const health = await queue.health();
    expect(health.reachable).toBe(false);
    expect(health.error).toContain(`DynamoDB table ${where.dedupeTable}`);
    expect(health.error).not.toContain('SQS:');
    expect((await receiver.health()).ok).toBe(false);
    down.destroy();
  });

  it('lists a record whose verdict write failed in batchItemFailures, and does not take its redelivery for a stall', async () => {
    const where = await place(1);
    let refusals = 2;
    // The retry's send (a message whose try count is 1) is refused twice.
    const sqs = failing(aws().sqs, 'SendMessageCommand', (command) => {
      const body = (command.input as { MessageBody: string }).MessageBody;
      return body.includes('"tries":1') && refusals-- > 0;
    });
    // maxStalls 0: one redelivery taken for a stall would fail the alert as poison.
    const receiver = receiverOn(queueOn(where, { sqs, maxStalls: 0 }), 1);
    const attempts: number[] = [];
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      attempts.push(attempt);
      if (attempt === 0) throw new Error('CRM down');
    });
    receiver.onError((error) => void errors.push(error));
    const handler = createLambdaHandler(receiver);
    expect((await handler(functionUrlEvent('user_sqs_verdict'))).statusCode).toBe(202);
    const responses: SqsBatchResponse[] = [];
    await drain(where, (event) => handler(event), responses);
    expect(responses.filter((r) => r.batchItemFailures.length === 1)).toHaveLength(2);
    // The try whose verdict was lost ran again; the third delivery's verdict went through.
    expect(attempts).toEqual([0, 0, 0, 1]);
    expect(errors).toEqual([]);
    expect(await receiverQueueFailed(where)).toEqual([]);
  });

  it('fails a record received more than maxStalls + 1 times as poison, without running it', async () => {
    const where = await place();
    const queue = queueOn(where, { maxStalls: 2 });
    const receiver = receiverOn(queue);
    let runs = 0;
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', () => {
      runs++;
    });
    receiver.onError((error) => void errors.push(error));
    const handler = createLambdaHandler(receiver);
    expect((await handler(functionUrlEvent('user_sqs_poison'))).statusCode).toBe(202);
    // Every consumer died with it: SQS hands it out a fourth time (3 stalls > maxStalls 2).
    const mapping = startEventSourceMapping({
      sqs: aws().sqs,
      queueUrl: where.queueUrl,
      queueArn: where.queueArn,
      handler: (event) => {
        for (const record of event.Records) record.attributes.ApproximateReceiveCount = '4';
        return handler(event);
      },
    });
    await queueDrained(() => aws().messages(where.queueUrl), 30_000);
    await mapping.stop();
    expect(runs).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AlertStalledError);
    const [failed] = await queue.failed();
    expect(failed?.error).toMatch(/^AlertStalledError/);
  });

  it('sends a retry delay over 15 minutes in hops of at most 900 s (fauxqs would take more: our side pinned)', async () => {
    expect([0, 1, 999, 1000, 1001, 900_000, 10 ** 9].map(delaySecondsOf)).toEqual([
      0, 1, 1, 1, 2, 900, 900,
    ]);
    const where = await place();
    const sent: { DelaySeconds?: number; MessageBody: string }[] = [];
    const recording = watched(aws().sqs, (command) => {
      if (command.constructor.name === 'SendMessageCommand') {
        sent.push(command.input as (typeof sent)[number]);
      }
    });
    const queue = queueOn(where, { sqs: recording });
    const receiver = receiverOn(queue, { retries: 1, backoffMs: () => 2_000_000 });
    const attempts: number[] = [];
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      attempts.push(attempt);
      if (attempt === 0) throw new Error('CRM down');
    });
    const handler = createLambdaHandler(receiver);
    const started = Date.now();
    await handler(functionUrlEvent('user_sqs_hops'));
    const mapping = startEventSourceMapping({
      sqs: aws().sqs,
      queueUrl: where.queueUrl,
      queueArn: where.queueArn,
      handler: (event) => handler(event),
    });
    while (sent.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    await mapping.stop();
    const retry = sent[1];
    expect(retry?.DelaySeconds).toBe(900);
    const body = JSON.parse(retry?.MessageBody ?? '{}') as { notBefore: number; tries: number };
    expect(body.tries).toBe(1);
    expect(body.notBefore - started).toBeGreaterThanOrEqual(2_000_000);
    expect(await aws().messages(where.queueUrl)).toMatchObject({ delayed: 1 });

    // The first hop arrives (15 minutes later): sent on, not run.
    const record = (messageBody: string, id: string): SqsEvent['Records'][number] => ({
      messageId: id,
      body: messageBody,
      attributes: { ApproximateReceiveCount: '1' },
      eventSource: 'aws:sqs',
      eventSourceARN: where.queueArn,
    });
    const hop = await handler({ Records: [record(retry?.MessageBody ?? '', 'hop-1')] });
    expect(hop.batchItemFailures).toEqual([]);
    expect(attempts).toEqual([0]);
    expect(sent[2]?.DelaySeconds).toBe(900);
    expect(JSON.parse(sent[2]?.MessageBody ?? '{}')).toMatchObject({ notBefore: body.notBefore });
    // The last hop, due: run.
    const due = JSON.stringify({ ...body, notBefore: Date.now() - 1 });
    await handler({ Records: [record(due, 'hop-last')] });
    expect(attempts).toEqual([0, 1]);
  });

  it('refuses an unknown option naming it and the closest known key, and bad values', () => {
    const base = {
      queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/alerts',
      dedupeTable: 'ids',
      failedTable: 'failed',
    };
    const make = (options: Record<string, unknown>): SqsQueue =>
      createSqsQueue(options as unknown as SqsQueueOptions);
    expect(() => make({ ...base, maxStall: 2 })).toThrow(
      /^createSqsQueue does not know the option "maxStall" \(did you mean maxStalls\?\)/,
    );
    expect(() => make({ ...base, queueURL: base.queueUrl })).toThrow(
      /"queueURL" \(did you mean queueUrl\?\)/,
    );
    expect(() => make({ ...base, dedupeTtl: 1 })).toThrow(
      /"dedupeTtl" \(did you mean dedupeTtlMs\?\)/,
    );
    expect(() => make({ ...base, failedTable: '' })).toThrow(TypeError);
    expect(() => make({ ...base, queueUrl: 'alerts' })).toThrow(/queueUrl must be a queue URL/);
    expect(() => make({ ...base, maxStalls: -1 })).toThrow(/maxStalls/);
    expect(() => make({ ...base, sqs: {} })).toThrow(/sqs must be a client/);
    expect(() => make({ ...base })).not.toThrow();
  });

  it('consumes with the receiver of each handler when two receivers of this process use one queue', async () => {
    const where = await place();
    const first = receiverOn(queueOn(where));
    const second = receiverOn(queueOn(where));
    const ran: string[] = [];
    first.on('churn_risk_alert', (alert) => void ran.push(`first ${alert.userId}`));
    second.on('churn_risk_alert', (alert) => void ran.push(`second ${alert.userId}`));
    const byFirst = createLambdaHandler(first);
    const bySecond = createLambdaHandler(second);
    // Both produce to the one queue; whichever consumes runs its own receiver's handlers.
    expect((await byFirst(functionUrlEvent('user_two_a'))).statusCode).toBe(202);
    expect((await bySecond(functionUrlEvent('user_two_b'))).statusCode).toBe(202);
    await drain(where, (event) => bySecond(event));
    expect(ran.sort()).toEqual(['second user_two_a', 'second user_two_b']);
    ran.length = 0;
    expect((await bySecond(functionUrlEvent('user_two_c'))).statusCode).toBe(202);
    await drain(where, (event) => byFirst(event));
    expect(ran).toEqual(['first user_two_c']);
  });

  it("tells SQS events from HTTP ones, and refuses an SQS event of another queue than its receiver's", async () => {
    const where = await place();
    const elsewhere = await place();
    const bodies: string[] = [];
    const sqs = watched(aws().sqs, ({ input }) => {
      const { MessageBody } = input as { MessageBody?: string };
      if (MessageBody !== undefined) bodies.push(MessageBody);
    });
    const receiver = receiverOn(queueOn(where, { sqs }));
    const ran: string[] = [];
    receiver.on('churn_risk_alert', (alert) => void ran.push(alert.userId));
    receiverOn(queueOn(elsewhere)); // the other queue has a receiver in this process too
    const handler = createLambdaHandler(receiver);
    const stranger: SqsEvent = {
      Records: [
        {
          messageId: 'm1',
          body: '{}',
          attributes: { ApproximateReceiveCount: '1' },
          eventSource: 'aws:sqs',
          eventSourceARN: elsewhere.queueArn,
        },
      ],
    };
    const refusal = await handler(stranger).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TypeError);
    expect((refusal as TypeError).message).toContain(elsewhere.queueArn);
    expect((refusal as TypeError).message).toContain(`(${where.queueUrl})`);
    expect((refusal as TypeError).message).toMatch(/createSqsQueue\(\{ queueUrl \}\)/);
    // A message that is not an alert message is deleted (not delivered again forever).
    const ownRecord = { ...(stranger.Records[0] as SqsRecord), eventSourceARN: where.queueArn };
    expect(await handler({ Records: [ownRecord] })).toEqual({ batchItemFailures: [] });
    // One record of another queue refuses the whole event: none of its records is consumed.
    expect((await handler(functionUrlEvent('user_sqs_mixed'))).statusCode).toBe(202);
    const alertRecord = { ...ownRecord, messageId: 'm2', body: bodies[0] ?? '' };
    const mixed = { Records: [alertRecord, { ...ownRecord, eventSourceARN: elsewhere.queueArn }] };
    await expect(handler(mixed)).rejects.toThrow(TypeError);
    expect(ran).toEqual([]);
    expect(await handler({ Records: [alertRecord] })).toEqual({ batchItemFailures: [] });
    expect(ran).toEqual(['user_sqs_mixed']);
    await expect(handler({ Records: [{ body: '{}' }] } as never)).rejects.toThrow(TypeError);
  });

  it('churn-risk-sqs lists and retries the failed table', async () => {
    const where = await place();
    const queue = queueOn(where);
    const receiver = receiverOn(queue, 0);
    receiver.on('churn_risk_alert', () => {
      throw new Error('CRM down');
    });
    const handler = createLambdaHandler(receiver);
    await handler(functionUrlEvent('user_sqs_cli'));
    await drain(where, (event) => handler(event));
    const saved = { ...process.env };
    Object.assign(process.env, aws().env);
    try {
      const run = async (args: string[]): Promise<{ code: number; out: string; err: string }> => {
        let out = '';
        let err = '';
        const code = await runFailedCli(args, {
          out: (text) => (out += text),
          err: (text) => (err += text),
        });
        return { code, out, err };
      };
      const flags = ['--queue-url', where.queueUrl, '--table', where.failedTable];
      const listed = await run(['failed', 'list', '--json', ...flags]);
      expect(listed.code).toBe(0);
      const [line] = listed.out.trim().split('\n');
      const failed = JSON.parse(line ?? '{}') as { id: string; jobId: string };
      expect(failed.id).toMatch(/^user_sqs_cli:/);
      expect(await run(['failed', 'retry', failed.id, ...flags])).toEqual({
        code: 0,
        out: `Retrying ${failed.id}.\n`,
        err: '',
      });
      expect((await run(['failed', 'retry', 'nope', ...flags])).code).toBe(1);
      const help = '\nRun "churn-risk-sqs --help" for usage.\n';
      expect(await run(['failed', 'list', '--queue-url', where.queueUrl])).toEqual({
        code: 2,
        out: '',
        err: 'churn-risk-sqs: --table <name> is required (or set $CHURN_RISK_FAILED_TABLE).\n',
      });
      expect(await run(['failed', 'list', '--table', where.failedTable])).toEqual({
        code: 2,
        out: '',
        err: `churn-risk-sqs: --queue-url <url> is required (or set $CHURN_RISK_QUEUE_URL).${help}`,
      });
      expect(await run(['failed', 'list', '--queue-ur', where.queueUrl, '--tabel', 'x'])).toEqual({
        code: 2,
        out: '',
        err: `churn-risk-sqs: unknown option --queue-ur; did you mean --queue-url?${help}`,
      });
    } finally {
      for (const key of Object.keys(aws().env)) {
        if (saved[key] === undefined) Reflect.deleteProperty(process.env, key);
        else process.env[key] = saved[key];
      }
    }
    expect((await aws().messages(where.queueUrl)).visible).toBe(1);
  });
});

/** The failed alerts of `where`'s queue, read through a queue of its own. */
function receiverQueueFailed(where: Place): ReturnType<SqsQueue['failed']> {
  return queueOn(where).failed();
}
