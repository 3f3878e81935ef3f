import {
  resolveFailedListOptions,
  type FailedAlert,
  type FailedListOptions,
  type QueuedAlert,
} from '@churn-risk/core';
import { dynamoDbModule, send, type AwsSdkClient } from './aws-sdk.js';
import { epochSeconds } from './dynamo-identities.js';

/** A failed alert as the consumer stores it. */
export interface FailedRecord {
  entry: QueuedAlert;
  tries: number;
  succeeded: readonly string[];
  error: Error;
}

type Attribute = { S?: string; N?: string };
type Item = Record<string, Attribute | undefined>;

/** A failed alert's id: when it failed (13 digits, so ids sort by time), then a random part. */
const ID = /^\d{13}-[0-9a-f]{8}$/;

/** What a retry sends again: the alert and its record of handlers that succeeded. */
export interface StoredFailure {
  id: string;
  entry: QueuedAlert;
  succeeded: string[];
}

function storedFailure(item: Item): StoredFailure {
  return {
    id: item.sk?.S ?? '',
    entry: JSON.parse(item.entry?.S ?? '{}') as QueuedAlert,
    succeeded: JSON.parse(item.succeeded?.S ?? '[]') as string[],
  };
}

function toFailedAlert(item: Item): FailedAlert {
  const entry = JSON.parse(item.entry?.S ?? '{}') as QueuedAlert;
  return {
    id: item.sk?.S ?? '',
    alertId: entry.id,
    alert: entry.alert,
    error: item.error?.S ?? '',
    succeededHandlers: JSON.parse(item.succeeded?.S ?? '[]') as string[],
    tries: Number(item.tries?.N ?? 0),
    receivedAt: new Date(entry.receivedAt),
    failedAt: new Date(Number(item.failedAt?.N ?? 0)),
  };
}

/**
 * The failed table: one partition per queue (`pk` = the queue's name), one item per failed alert
 * (`sk` = its id), newest last in the sort key so that a query backwards lists newest first. Every
 * item carries the TTL attribute `expiresAt` (`keepFailedMs` after the failure); an item past it
 * is not listed, counted or retried, even before DynamoDB's TTL deleted it.
 */
export class DynamoFailedTable {
  readonly #table: string;
  readonly #partition: string;
  readonly #keepMs: number;
  readonly #client: () => Promise<AwsSdkClient>;

  constructor(
    table: string,
    partition: string,
    keepMs: number,
    client: () => Promise<AwsSdkClient>,
  ) {
    this.#table = table;
    this.#partition = partition;
    this.#keepMs = keepMs;
    this.#client = client;
  }

  /** Stores a failed alert under a fresh id (an alert that fails again after a retry is new). */
  async add(record: FailedRecord): Promise<void> {
    const [client, { PutItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    const now = Date.now();
    const random = crypto.randomUUID().slice(0, 8);
    await send(
      client,
      new PutItemCommand({
        TableName: this.#table,
        Item: {
          pk: { S: this.#partition },
          sk: { S: `${String(now).padStart(13, '0')}-${random}` },
          alertId: { S: record.entry.id },
          entry: { S: JSON.stringify(record.entry) },
          succeeded: { S: JSON.stringify(record.succeeded) },
          tries: { N: String(record.tries) },
          error: { S: `${record.error.name}: ${record.error.message}` },
          failedAt: { N: String(now) },
          expiresAt: { N: String(epochSeconds(now + this.#keepMs)) },
        },
      }),
    );
  }

  /** Up to `limit` live items, newest first, after skipping `offset`; `alertId` filters. */
  async #query(limit: number, offset = 0, alertId?: string): Promise<Item[]> {
    const [client, { QueryCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await send<{ Items?: Item[]; LastEvaluatedKey?: Record<string, unknown> }>(
        client,
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression:
            alertId === undefined ? 'expiresAt > :now' : 'expiresAt > :now AND alertId = :alert',
          ExpressionAttributeValues: {
            ':pk': { S: this.#partition },
            ':now': { N: String(epochSeconds(Date.now())) },
            ...(alertId === undefined ? {} : { ':alert': { S: alertId } }),
          },
          ScanIndexForward: false,
          ExclusiveStartKey: start as never,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined && items.length < offset + limit);
    return items.slice(offset, offset + limit);
  }

  /** Failed alerts, newest first (default `limit` 50, `offset` 0). */
  async failed(options?: FailedListOptions): Promise<FailedAlert[]> {
    const { limit, offset } = resolveFailedListOptions(options);
    return (await this.#query(limit, offset)).map(toFailedAlert);
  }

  /** How many live failed alerts the partition holds. */
  async count(): Promise<number> {
    return (await this.#query(Number.MAX_SAFE_INTEGER)).length;
  }

  /** The failed alert `id` (as `failed()` lists it), or the newest of alert identity `id`. */
  async find(id: string): Promise<StoredFailure> {
    let item: Item | undefined;
    if (ID.test(id)) {
      const [client, { GetItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
      ({ Item: item } = await send<{ Item?: Item }>(
        client,
        new GetItemCommand({
          TableName: this.#table,
          Key: { pk: { S: this.#partition }, sk: { S: id } },
          ConsistentRead: true,
        }),
      ));
      if (Number(item?.expiresAt?.N ?? 0) <= epochSeconds(Date.now())) item = undefined;
    } else {
      [item] = await this.#query(1, 0, id);
    }
    if (item === undefined) throw new TypeError(`No failed alert has the id ${id}.`);
    return storedFailure(item);
  }

  /** Every live failed alert now (a snapshot), newest first. */
  async all(): Promise<StoredFailure[]> {
    return (await this.#query(Number.MAX_SAFE_INTEGER)).map(storedFailure);
  }

  /** Deletes failed alert `id`. */
  async remove(id: string): Promise<void> {
    const [client, { DeleteItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    await send(
      client,
      new DeleteItemCommand({
        TableName: this.#table,
        Key: { pk: { S: this.#partition }, sk: { S: id } },
      }),
    );
  }

  /** Reads one key, to learn whether the table answers. */
  async ping(): Promise<void> {
    const [client, { GetItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    await send(
      client,
      new GetItemCommand({
        TableName: this.#table,
        Key: { pk: { S: this.#partition }, sk: { S: 'churn-risk#health' } },
      }),
    );
  }
}
