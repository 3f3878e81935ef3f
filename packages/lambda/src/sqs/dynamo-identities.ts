import { isConditionFailed, type AwsCalls } from './aws-sdk.js';

/** Seconds since the epoch, DynamoDB's TTL unit. */
export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);

/** How long a note of a redelivery we asked for is kept: SQS's longest retention, 14 days. */
const NOTE_TTL_S = 14 * 86_400;

/** A note's key: an identity (`userId:triggeredAt`) always holds a `:`, a note never does. */
const noteKey = (messageId: string): { pk: { S: string } } => ({
  pk: { S: `sqs-message#${messageId}` },
});

/**
 * The dedupe table: alert identities (`pk` = the identity), and notes of the redeliveries this
 * package asked for (`pk` = `sqs-message#<messageId>`). Every item carries the TTL attribute
 * `expiresAt` (epoch seconds).
 */
export class DynamoIdentities {
  readonly #table: string;
  readonly #aws: AwsCalls;

  constructor(table: string, aws: AwsCalls) {
    this.#table = table;
    this.#aws = aws;
  }

  /**
   * Claims `id` for `ttlMs` under `token`, in one conditional write: true when no live claim
   * existed. An expired claim is claimed again even before DynamoDB's TTL deleted it.
   */
  async claim(id: string, ttlMs: number, token: string): Promise<boolean> {
    const now = Date.now();
    try {
      await this.#aws.ddb('PutItem', {
        TableName: this.#table,
        Item: {
          pk: { S: id },
          expiresAt: { N: String(epochSeconds(now + ttlMs)) },
          claim: { S: token },
        },
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
        ExpressionAttributeValues: { ':now': { N: String(epochSeconds(now)) } },
      });
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  /** Deletes the claim of `id` made under `token` (never another one's). */
  async release(id: string, token: string): Promise<void> {
    try {
      await this.#aws.ddb('DeleteItem', {
        TableName: this.#table,
        Key: { pk: { S: id } },
        ConditionExpression: 'claim = :token',
        ExpressionAttributeValues: { ':token': { S: token } },
      });
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
    }
  }

  /** Counts one redelivery of message `messageId` that this package asked for. */
  noteRedelivery(messageId: string): Promise<unknown> {
    return this.#aws.ddb('UpdateItem', {
      TableName: this.#table,
      Key: noteKey(messageId),
      UpdateExpression: 'ADD redeliveries :one SET expiresAt = :expires',
      ExpressionAttributeValues: {
        ':one': { N: '1' },
        ':expires': { N: String(epochSeconds(Date.now()) + NOTE_TTL_S) },
      },
    });
  }

  /** The redeliveries of `messageId` this package asked for (a strongly consistent read). */
  async redeliveries(messageId: string): Promise<number> {
    const { Item } = await this.#aws.ddb<{ Item?: { redeliveries?: { N?: string } } }>('GetItem', {
      TableName: this.#table,
      Key: noteKey(messageId),
      ConsistentRead: true,
    });
    return Number(Item?.redeliveries?.N ?? 0);
  }

  /** Reads one key, to learn whether the table answers. */
  ping(): Promise<unknown> {
    return this.#aws.ddb('GetItem', { TableName: this.#table, Key: noteKey('health') });
  }
}
