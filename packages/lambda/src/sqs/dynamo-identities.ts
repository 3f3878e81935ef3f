import { dynamoDbModule, isConditionFailed, send, type AwsSdkClient } from './aws-sdk.js';

/** How long a note of a redelivery we asked for is kept: SQS's longest retention, 14 days. */
const NOTE_TTL_S = 14 * 24 * 3600;

/** Seconds since the epoch, DynamoDB's TTL unit. */
export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);

/**
 * The dedupe table: alert identities (`pk` = the identity `userId:triggeredAt`), and notes of the
 * redeliveries this package asked for (`pk` = `sqs-message#<messageId>`: an identity always holds
 * a `:`, a note never does). Every item carries the TTL attribute `expiresAt` (epoch seconds).
 */
export class DynamoIdentities {
  readonly #table: string;
  readonly #client: () => Promise<AwsSdkClient>;

  constructor(table: string, client: () => Promise<AwsSdkClient>) {
    this.#table = table;
    this.#client = client;
  }

  /**
   * Claims `id` for `ttlMs` under `token`, in one conditional write: true when no live claim
   * existed. An expired claim is claimed again even before DynamoDB's TTL deleted it (TTL
   * deletion runs within days, not at the second).
   */
  async claim(id: string, ttlMs: number, token: string): Promise<boolean> {
    const [client, { PutItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    const now = Date.now();
    try {
      await send(
        client,
        new PutItemCommand({
          TableName: this.#table,
          Item: {
            pk: { S: id },
            expiresAt: { N: String(epochSeconds(now + ttlMs)) },
            claim: { S: token },
          },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': { N: String(epochSeconds(now)) } },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  /** Deletes the claim of `id` made under `token` (never another one's). */
  async release(id: string, token: string): Promise<void> {
    const [client, { DeleteItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    try {
      await send(
        client,
        new DeleteItemCommand({
          TableName: this.#table,
          Key: { pk: { S: id } },
          ConditionExpression: 'claim = :token',
          ExpressionAttributeValues: { ':token': { S: token } },
        }),
      );
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
    }
  }

  /** Counts one redelivery of message `messageId` that this package asked for. */
  async noteRedelivery(messageId: string): Promise<void> {
    const [client, { UpdateItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    await send(
      client,
      new UpdateItemCommand({
        TableName: this.#table,
        Key: { pk: { S: `sqs-message#${messageId}` } },
        UpdateExpression: 'ADD redeliveries :one SET expiresAt = :expires',
        ExpressionAttributeValues: {
          ':one': { N: '1' },
          ':expires': { N: String(epochSeconds(Date.now()) + NOTE_TTL_S) },
        },
      }),
    );
  }

  /** The redeliveries of `messageId` this package asked for (a strongly consistent read). */
  async redeliveries(messageId: string): Promise<number> {
    const [client, { GetItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    const { Item } = await send<{ Item?: Record<string, { N?: string }> }>(
      client,
      new GetItemCommand({
        TableName: this.#table,
        Key: { pk: { S: `sqs-message#${messageId}` } },
        ConsistentRead: true,
      }),
    );
    return Number(Item?.redeliveries?.N ?? 0);
  }

  /** Reads one key, to learn whether the table answers. */
  async ping(): Promise<void> {
    const [client, { GetItemCommand }] = await Promise.all([this.#client(), dynamoDbModule()]);
    await send(
      client,
      new GetItemCommand({ TableName: this.#table, Key: { pk: { S: 'churn-risk#health' } } }),
    );
  }
}
