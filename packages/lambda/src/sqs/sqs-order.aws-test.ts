import type { Receiver } from '@churn-risk/core';
import { orderKeyOf, type AlertRecord } from '@churn-risk/core/store';
import { describe, expect, it } from 'vitest';
import { dynamoDbSdk, sqsSdk } from '../../../../test/support/aws/emulators.js';
import {
  queueDrained,
  startEventSourceMapping,
  type EventSourceMapping,
} from '../../../../test/support/aws/event-source-mapping.js';
import { emulatedAws, signedFunctionUrlEvent, type Place } from './emulated-aws.test-util.js';
import {
  createDynamoOrder,
  createLambdaHandler,
  type AwsSdkClient,
  type DynamoOrderOptions,
  type HttpApiEvent,
  type SqsEvent,
  type SqsQueue,
  type SqsQueueOptions,
} from '../index.js';
import { awsCalls } from './aws-sdk.js';
import type { DynamoOrderBinding, SqsUserOrder } from './dynamo-order.js';

// Order per user in queue mode (createDynamoOrder), on fauxqs and dynalite: two consumers never
// run two alerts of one user at once, the oldest goes first, a postponed alert keeps its tries
// and stalls, a lapsed hold is taken over, and the claim's conditional write loses to a write
// that came between its read and its write.

const { GetItemCommand } = dynamoDbSdk;
const { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand } = sqsSdk;
const SECRET = 'whsec_sqs_order';
const emulated = emulatedAws('sqs-order');
const { aws, place } = emulated;

function queueOn(
  where: Place,
  order: DynamoOrderOptions = { waitMs: 1_000 },
  options: Partial<SqsQueueOptions> = {},
): SqsQueue {
  return emulated.queueOn(where, {
    ...aws().clients(), // each queue its own clients, as each function instance has
    order: createDynamoOrder(order),
    ...options,
  });
}

const orderedOn = (queue: SqsQueue, retries = 0): Receiver =>
  emulated.receiverOn(queue, { secret: SECRET, retries, order: 'per-user' });

/** An alert of `user` at minute `minutes` of a fixed hour. */
function alertAt(user: string, minutes: number): { userId: string; triggeredAt: string } {
  return { userId: user, triggeredAt: new Date(Date.UTC(2026, 3, 1, 10, minutes)).toISOString() };
}

/** A function URL event carrying a signed delivery of `alert`. */
const functionUrlEvent = (alert: { userId: string; triggeredAt: string }): HttpApiEvent =>
  signedFunctionUrlEvent(alert, SECRET);

/** Delivers each alert, in the order given, to the receivers in turn; each must be accepted. */
async function deliverAll(
  to: readonly Receiver[],
  alerts: readonly { userId: string; triggeredAt: string }[],
): Promise<void> {
  for (const [i, alert] of alerts.entries()) {
    const answer = await createLambdaHandler(to[i % to.length] as Receiver)(
      functionUrlEvent(alert),
    );
    expect(answer.body, `${alert.userId}@${alert.triggeredAt}`).toBe('{"received":true}');
  }
}

/** Local event source mappings, `perReceiver` for each receiver, batches of `batchSize`. */
function mappingsOf(
  where: Place,
  of: readonly Receiver[],
  perReceiver = 1,
  batchSize = 5,
  onBatch?: (event: SqsEvent) => void,
): EventSourceMapping[] {
  return of.flatMap((receiver) =>
    Array.from({ length: perReceiver }, () =>
      startEventSourceMapping({
        sqs: aws().sqs,
        queueUrl: where.queueUrl,
        queueArn: where.queueArn,
        batchSize,
        handler: createLambdaHandler(receiver),
        ...(onBatch === undefined ? {} : { onBatch }),
      }),
    ),
  );
}

/** Runs the mappings until the queue is empty, then stops them (once `before` resolved). */
async function drainWith(
  where: Place,
  mappings: readonly EventSourceMapping[],
  before: () => void = () => undefined,
): Promise<void> {
  try {
    await queueDrained(() => aws().messages(where.queueUrl), 45_000);
  } finally {
    before();
    await Promise.all(mappings.map((mapping) => mapping.stop()));
  }
}

/** Resolves once `check()` holds (polled). */
async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An SDK client that sends through `client` after `look` saw (and may act on) the command. */
function watched(
  client: { send(command: never): Promise<unknown> },
  look: (command: { constructor: { name: string }; input: unknown }) => Promise<void> | void,
): AwsSdkClient {
  return {
    send: async (command: { constructor: { name: string }; input: unknown }) => {
      await look(command);
      return client.send(command as never);
    },
  };
}

interface RunLog {
  /** `<user>@<triggeredAt>` of each run, as it started. */
  started: string[];
  finished: string[];
  overlaps: string[];
  attempts: number[];
}

/** Registers on each receiver a handler that logs its runs and takes `ms`. */
function logRuns(of: readonly Receiver[], ms: number): RunLog {
  const log: RunLog = { started: [], finished: [], overlaps: [], attempts: [] };
  const running = new Map<string, string>();
  for (const receiver of of) {
    receiver.on('churn_risk_alert', async (alert, context) => {
      const other = running.get(alert.userId);
      if (other !== undefined) log.overlaps.push(`${other} and ${context.id}`);
      running.set(alert.userId, context.id);
      log.started.push(`${alert.userId}@${alert.triggeredAt}`);
      log.attempts.push(context.attempt);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running.delete(alert.userId);
      log.finished.push(`${alert.userId}@${alert.triggeredAt}`);
    });
  }
  return log;
}

const name = (alert: { userId: string; triggeredAt: string }): string =>
  `${alert.userId}@${alert.triggeredAt}`;

describe('createDynamoOrder: order per user in queue mode', () => {
  it('runs the alerts of one user one at a time across two consumers, oldest first, other users side by side', async () => {
    const where = await place();
    const of = [orderedOn(queueOn(where)), orderedOn(queueOn(where))];
    const log = logRuns(of, 30);
    const users = ['order_u1', 'order_u2', 'order_u3'];
    // Accepted out of order: minute 3, 1, 4, 0, 2 of each user, the users interleaved.
    const alerts = [3, 1, 4, 0, 2].flatMap((minute) => users.map((u) => alertAt(u, minute)));
    await deliverAll(of, alerts);
    await drainWith(where, mappingsOf(where, of, 2));

    expect(log.overlaps).toEqual([]);
    expect(log.started).toHaveLength(alerts.length);
    for (const user of users) {
      expect(log.started.filter((run) => run.startsWith(`${user}@`))).toEqual(
        [0, 1, 2, 3, 4].map((minute) => name(alertAt(user, minute))),
      );
    }
    // Postponed alerts went back without a try counted.
    expect(log.attempts.every((attempt) => attempt === 0)).toBe(true);
    expect(of.map((r) => r.stats.failed)).toEqual([0, 0]);
  });

  it('reports the newest time accepted for the user, also once that alert is done', async () => {
    const where = await place();
    const receiver = orderedOn(queueOn(where));
    const seen: [string, string | undefined][] = [];
    const written: string[] = [];
    receiver.on(
      'churn_risk_alert',
      (alert, context) => void seen.push([alert.triggeredAt, context.supersededBy]),
      { id: 'audit' },
    );
    receiver.on('churn_risk_alert', (alert) => void written.push(alert.triggeredAt), {
      id: 'crm',
      superseded: 'skip',
    });
    const [older, newer] = [alertAt('order_newest', 1), alertAt('order_newest', 2)];
    await deliverAll([receiver], [newer]);
    await drainWith(where, mappingsOf(where, [receiver]));
    // The newer alert is done; the older one comes late, and is superseded all the same.
    await deliverAll([receiver], [older]);
    await drainWith(where, mappingsOf(where, [receiver]));
    expect(seen).toEqual([
      [newer.triggeredAt, undefined],
      [older.triggeredAt, newer.triggeredAt],
    ]);
    expect(written).toEqual([newer.triggeredAt]);
    expect(receiver.stats.superseded).toBe(1);
  });

  it('sends a postponed alert back with its tries and stalls, none counted for the postponement', async () => {
    const where = await place();
    const bodies: { id: string; tries: number; stalls?: number }[] = [];
    const sqs = watched(aws().clients().sqs, (command) => {
      if (command.constructor.name !== 'SendMessageCommand') return;
      const { MessageBody } = command.input as { MessageBody: string };
      const body = JSON.parse(MessageBody) as {
        entry: { id: string };
        tries: number;
        stalls?: number;
      };
      bodies.push({
        id: body.entry.id,
        tries: body.tries,
        ...(body.stalls ? { stalls: body.stalls } : {}),
      });
    });
    // maxStalls 1: one death of a consumer is allowed; were a postponement counted as a stall,
    // or a postponed message to lose the death it had, the alert would fail as poison.
    const queue = queueOn(where, { waitMs: 1_000 }, { sqs, maxStalls: 1 });
    const receiver = orderedOn(queue);
    const errors: unknown[] = [];
    receiver.onError((error) => void errors.push(error));
    const [first, second] = [alertAt('order_postponed', 1), alertAt('order_postponed', 2)];
    const secondId = `${second.userId}:${second.triggeredAt}`;
    const postponed = (): number =>
      bodies.filter((b) => b.id === secondId && b.stalls === 1).length;
    const started: string[] = [];
    receiver.on('churn_risk_alert', async (alert, context) => {
      started.push(`${alert.triggeredAt}#${String(context.attempt)}`);
      // The first alert holds its user until the second was sent back twice.
      if (alert.triggeredAt === first.triggeredAt)
        await until(() => postponed() >= 2, 'postponements');
    });
    await deliverAll([receiver], [first, second]);
    // A consumer that dies holding both messages: received, never deleted; the first is handed
    // out again at once, the second after a second (ApproximateReceiveCount 2: one stall).
    const { Messages = [] } = await aws().sqs.send(
      new ReceiveMessageCommand({ QueueUrl: where.queueUrl, MaxNumberOfMessages: 10 }),
    );
    expect(Messages).toHaveLength(2);
    for (const message of Messages) {
      const isSecond = message.Body?.includes(second.triggeredAt) === true;
      await aws().sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: where.queueUrl,
          ReceiptHandle: message.ReceiptHandle,
          VisibilityTimeout: isSecond ? 1 : 0,
        }),
      );
    }
    await drainWith(where, mappingsOf(where, [receiver], 2, 1));

    expect(started).toEqual([`${first.triggeredAt}#0`, `${second.triggeredAt}#0`]);
    expect(errors).toEqual([]);
    expect(postponed()).toBeGreaterThanOrEqual(2);
    // Each postponement sent the message back as it came: tries 0, the one stall it had.
    expect(bodies.filter((b) => b.id === secondId).slice(1)).toEqual(
      bodies
        .filter((b) => b.id === secondId)
        .slice(1)
        .map(() => ({ id: secondId, tries: 0, stalls: 1 })),
    );
    expect(await queue.failed()).toEqual([]);
  });

  it("takes a lapsed hold over: an alert whose message is gone holds its user no longer than holdMs (the queue's visibility timeout)", async () => {
    const where = await place(2); // holdMs: the visibility timeout, 2 s
    const receiver = orderedOn(queueOn(where));
    const [lost, next] = [alertAt('order_lapsed', 1), alertAt('order_lapsed', 2)];
    const handles = new Map<string, string>();
    const started: string[] = [];
    let thaw: () => void = () => undefined;
    const frozen = new Promise<void>((resolve) => (thaw = resolve));
    let lostDone = false;
    receiver.on('churn_risk_alert', async (alert) => {
      started.push(name(alert));
      if (alert.triggeredAt !== lost.triggeredAt) return;
      // Its message is deleted (as if its record were lost), and its consumer freezes.
      await aws().sqs.send(
        new DeleteMessageCommand({
          QueueUrl: where.queueUrl,
          ReceiptHandle: handles.get(lost.triggeredAt),
        }),
      );
      await frozen;
      lostDone = true;
    });
    await deliverAll([receiver], [lost, next]);
    const mappings = mappingsOf(where, [receiver], 2, 1, (event) => {
      for (const record of event.Records) {
        const at = [lost, next].find((a) => record.body.includes(a.triggeredAt))?.triggeredAt;
        if (at !== undefined && record.receiptHandle) handles.set(at, record.receiptHandle);
      }
    });
    await drainWith(where, mappings, thaw);
    // The later alert ran while the lost one's consumer was still frozen.
    expect(started).toEqual([name(lost), name(next)]);
    expect(lostDone).toBe(true); // thawed once the queue was empty, before the mappings stopped
  });

  it("gives a dead consumer's alert its own hold back when SQS hands it out again: it still goes first", async () => {
    const where = await place(1);
    // holdMs above the visibility timeout: the redelivery comes before the hold lapses.
    const receiver = orderedOn(queueOn(where, { holdMs: 6_000, waitMs: 1_000 }));
    const [first, second] = [alertAt('order_redelivered', 1), alertAt('order_redelivered', 2)];
    const log: string[] = [];
    let thaw: () => void = () => undefined;
    const frozen = new Promise<void>((resolve) => (thaw = resolve));
    let runs = 0;
    receiver.on('churn_risk_alert', async (alert) => {
      log.push(`start ${name(alert)}`);
      if (alert.triggeredAt === first.triggeredAt && runs++ === 0) await frozen; // dies
      log.push(`done ${name(alert)}`);
    });
    await deliverAll([receiver], [first, second]);
    await drainWith(where, mappingsOf(where, [receiver], 3, 1), thaw);
    expect(log.slice(0, 4)).toEqual([
      `start ${name(first)}`, // the consumer that froze
      `start ${name(first)}`, // SQS handed the message out again: it held its user still
      `done ${name(first)}`,
      `start ${name(second)}`,
    ]);
  });

  it('refuses a redelivery as a duplicate, and a refused send leaves nothing in the line', async () => {
    const where = await place();
    const refusing = queueOn(where, undefined, {
      sqs: watched(aws().clients().sqs, (command) => {
        if (command.constructor.name === 'SendMessageCommand') throw new Error('SQS down (test)');
      }),
    });
    const [lost, later] = [alertAt('order_refused', 1), alertAt('order_refused', 2)];
    const refused = await createLambdaHandler(orderedOn(refusing))(functionUrlEvent(lost));
    expect(refused.statusCode).toBe(503);
    const receiver = orderedOn(queueOn(where));
    const log = logRuns([receiver], 0);
    await deliverAll([receiver], [later]);
    const again = await createLambdaHandler(receiver)(functionUrlEvent(later));
    expect(again.body).toBe('{"received":true,"duplicate":true}');
    // The later alert is not held up by the one whose send was refused.
    await drainWith(where, mappingsOf(where, [receiver]));
    expect(log.started).toEqual([name(later)]);
    // The sender's retry of the refused alert is accepted, and runs (superseded).
    await deliverAll([receiver], [lost]);
    await drainWith(where, mappingsOf(where, [receiver]));
    expect(log.started).toEqual([name(later), name(lost)]);
    // The identities live in the user's item, not as items of their own.
    const { Item } = await aws().dynamodb.send(
      new GetItemCommand({
        TableName: where.dedupeTable,
        Key: { pk: { S: `${later.userId}:${later.triggeredAt}` } },
        ConsistentRead: true,
      }),
    );
    expect(Item).toBeUndefined();
  });
});

describe("the claim's conditional write", () => {
  /** The order of `where` on clients of its own (one function instance's), through `dynamodb`. */
  function linesOn(where: Place, dynamodb?: AwsSdkClient): SqsUserOrder {
    const clients = aws().clients();
    const binding = createDynamoOrder({ holdMs: 60_000, waitMs: 1_000 }) as DynamoOrderBinding;
    const calls = awsCalls(clients.sqs, dynamodb ?? clients.dynamodb, {
      queueUrl: where.queueUrl,
      dedupeTable: where.dedupeTable,
      failedTable: where.failedTable,
    });
    return binding.open(where, calls);
  }

  function entryOf(user: string, minute: number): AlertRecord<'delivered'> {
    const alert = alertAt(user, minute);
    return {
      id: `${alert.userId}:${alert.triggeredAt}`,
      receivedAt: Date.now(),
      alert: {
        event: 'churn_risk_alert',
        ...alert,
        score: 0.9,
        tier: 'high',
        signals: [],
        recommendation: 'Call.',
      },
      tries: 0,
      succeeded: [],
    };
  }

  async function accept(lines: SqsUserOrder, entry: AlertRecord<'delivered'>): Promise<boolean> {
    return lines.claims(orderKeyOf(entry)).claim(entry.id, 3_600_000, crypto.randomUUID());
  }

  it('holds a user for one alert of many claiming at once, the oldest, then each in turn', async () => {
    const where = await place();
    const instances = Array.from({ length: 6 }, () => linesOn(where));
    // Alerts not in the line (accepted without order per user): each may hold the user, and all
    // write at once; the version lets one write through.
    const strays = [0, 1, 2, 3, 4, 5].map((minute) => entryOf('order_strays', minute));
    const strayAnswers = await Promise.all(
      strays.map((entry, i) => (instances[i] as SqsUserOrder).claim(entry, orderKeyOf(entry))),
    );
    expect(strayAnswers.filter((answer) => 'newest' in answer)).toHaveLength(1);
    const entries = [5, 2, 4, 0, 3, 1].map((minute) => entryOf('order_race', minute));
    for (const [i, entry] of entries.entries()) {
      expect(await accept(instances[i] as SqsUserOrder, entry)).toBe(true);
      expect(await accept(instances[(i + 1) % 6] as SqsUserOrder, entry)).toBe(false); // duplicate
    }
    const order: string[] = [];
    let left = [...entries];
    while (left.length > 0) {
      // Every alert left claims at once, each from another instance.
      const answers = await Promise.all(
        left.map((entry, i) => (instances[i] as SqsUserOrder).claim(entry, orderKeyOf(entry))),
      );
      const holding = left.filter((_, i) => 'newest' in (answers[i] as object));
      expect(holding, `holders among ${String(left.length)}`).toHaveLength(1);
      const [holder] = holding as [AlertRecord<'delivered'>];
      expect(answers.find((a) => 'newest' in a)).toEqual({
        newest: Date.parse(entryOf('order_race', 5).alert.triggeredAt),
      });
      order.push(holder.alert.triggeredAt);
      await (instances[0] as SqsUserOrder).release(holder, orderKeyOf(holder));
      left = left.filter((entry) => entry !== holder);
    }
    expect(order).toEqual([0, 1, 2, 3, 4, 5].map((m) => alertAt('order_race', m).triggeredAt));
  });

  it('loses to an older alert accepted between its read and its write', async () => {
    const where = await place();
    const other = linesOn(where);
    const [older, newer] = [entryOf('order_between', 1), entryOf('order_between', 2)];
    let injected = false;
    const dynamodb = watched(aws().clients().dynamodb, async (command) => {
      const input = command.input as { UpdateExpression?: string };
      if (!injected && input.UpdateExpression?.startsWith('SET h = :me') === true) {
        injected = true; // the older alert is accepted right before the claim's write
        expect(await accept(other, older)).toBe(true);
      }
    });
    const lines = linesOn(where, dynamodb);
    expect(await accept(lines, newer)).toBe(true);
    expect(await lines.claim(newer, orderKeyOf(newer))).toEqual({ waitMs: 1_000 });
    expect(injected).toBe(true);
    expect(await other.claim(older, orderKeyOf(older))).toEqual({
      newest: Date.parse(newer.alert.triggeredAt),
    });
    // Held: the newer alert waits until the older one is done.
    expect(await lines.claim(newer, orderKeyOf(newer))).toHaveProperty('waitMs');
    await other.release(older, orderKeyOf(older));
    expect(await lines.claim(newer, orderKeyOf(newer))).toEqual({
      newest: Date.parse(newer.alert.triggeredAt),
    });
  });
});
