import {
  resolveFailedListOptions,
  type AlertRecord,
  type FailedListOptions,
} from '@churn-risk/core/store';
import { isConditionFailed, type AwsCalls } from './aws-sdk.js';
import { epochSeconds } from './dynamo-identities.js';

/** A failed alert as the consumer stores it. */
export interface FailedRecord {
  entry: AlertRecord<'accepted'>;
  tries: number;
  succeeded: readonly string[];
  error: Error;
}

type Item = Record<string, { S?: string; N?: string } | undefined>;

/**
 * How long a retry's claim of a failed alert holds (ms): the bound on its send. A claim older than
 * this is taken to be of a process that died, and another retry may claim the alert.
 */
const CLAIM_MS = 60_000;

function failedRecord(item: Item): AlertRecord<'failed'> {
  return {
    ...(JSON.parse(item.entry?.S ?? '{}') as AlertRecord<'accepted'>),
    jobId: item.sk?.S ?? '',
    tries: Number(item.tries?.N),
    succeeded: JSON.parse(item.succeeded?.S ?? '[]') as string[],
    error: item.error?.S ?? '',
    failedAt: Number(item.failedAt?.N),
  };
}

/**
 * The failed table: one partition per queue (`pk` = the queue's name), one item per failed alert
 * (`sk` = its id: the time of the failure, 13 digits, then a random part), so that a query
 * backwards lists the newest first. Every item carries the TTL attribute `expiresAt`; an item past
 * it is not listed, counted or retried, even before DynamoDB's TTL deleted it.
 */
export class DynamoFailedTable {
  readonly #table: string;
  readonly #pk: { S: string };
  readonly #keepMs: number;
  readonly #aws: AwsCalls;

  constructor(table: string, partition: string, keepMs: number, aws: AwsCalls) {
    this.#table = table;
    this.#pk = { S: partition };
    this.#keepMs = keepMs;
    this.#aws = aws;
  }

  /** Stores a failed alert under a fresh id (an alert that fails again after a retry is new). */
  add({ entry, tries, succeeded, error }: FailedRecord): Promise<unknown> {
    const now = Date.now();
    return this.#aws.ddb('PutItem', {
      TableName: this.#table,
      Item: {
        pk: this.#pk,
        sk: { S: `${String(now).padStart(13, '0')}-${crypto.randomUUID().slice(0, 8)}` },
        entry: { S: JSON.stringify(entry) },
        succeeded: { S: JSON.stringify(succeeded) },
        tries: { N: String(tries) },
        error: { S: `${error.name}: ${error.message}` },
        failedAt: { N: String(now) },
        expiresAt: { N: String(epochSeconds(now + this.#keepMs)) },
      },
    });
  }

  /** Every live failed alert (of failed id or alert identity `id`, when given), newest first. */
  async all(id?: string): Promise<AlertRecord<'failed'>[]> {
    const items: Item[] = [];
    let start: Record<string, never> | undefined;
    do {
      const page = await this.#aws.ddb<{
        Items?: Item[];
        LastEvaluatedKey?: Record<string, never>;
      }>('Query', {
        TableName: this.#table,
        KeyConditionExpression: 'pk = :pk',
        FilterExpression: 'expiresAt > :now',
        ExpressionAttributeValues: {
          ':pk': this.#pk,
          ':now': { N: String(epochSeconds(Date.now())) },
        },
        ScanIndexForward: false,
        ExclusiveStartKey: start,
      });
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    const all = items.map(failedRecord);
    return id === undefined ? all : all.filter((f) => f.jobId === id || f.id === id);
  }

  /** Failed alerts, newest first (default `limit` 50, `offset` 0). */
  async failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]> {
    const { limit, offset } = resolveFailedListOptions(options);
    return (await this.all()).slice(offset, offset + limit);
  }

  /**
   * Claims failed alert `id` for a retry, in one conditional write: true only while the item
   * exists and no other retry's claim holds it (`retryBy`, a time in ms), so that retries at once,
   * in any processes, send it once. A claim lapses after a minute: a retry whose send failed, or
   * whose process died before `remove`, leaves the alert to be retried again then (sent twice,
   * never lost). An item is never changed once written (a new failure is a new item), so the
   * record listed before the claim is the one claimed.
   */
  async claim(id: string): Promise<boolean> {
    const now = Date.now();
    try {
      await this.#aws.ddb('UpdateItem', {
        TableName: this.#table,
        Key: this.#key(id),
        UpdateExpression: 'SET retryBy = :until',
        ConditionExpression: 'attribute_exists(sk) AND NOT retryBy > :now',
        ExpressionAttributeValues: {
          ':until': { N: String(now + CLAIM_MS) },
          ':now': { N: String(now) },
        },
      });
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  /** Deletes failed alert `id`. */
  remove(id: string): Promise<unknown> {
    return this.#aws.ddb('DeleteItem', {
      TableName: this.#table,
      Key: this.#key(id),
    });
  }

  #key(id: string): { pk: { S: string }; sk: { S: string } } {
    return { pk: this.#pk, sk: { S: id } };
  }
}
