import type { AwsSdkClient } from './aws-sdk.js';
import type { DynamoOrder } from './dynamo-order.js';
import { integerOption, refuseUnknownOptions } from '@churn-risk/core/store';

/** Options of `createSqsQueue`. */
export interface SqsQueueOptions {
  /**
   * The queue's URL, `https://sqs.<region>.amazonaws.com/<account>/<name>`, or any other the AWS
   * SDK takes (an emulator's, `http://sqs.us-east-1.127.0.0.1:4566/000000000000/alerts`). Required.
   */
  queueUrl: string;
  /**
   * The DynamoDB table of alert identities (partition key `pk`, a string; TTL on `expiresAt`).
   * Each accepted alert's identity is claimed there for `dedupeTtlMs` before it is sent, so a
   * redelivery to any function instance answers `202 duplicate`. Required.
   */
  dedupeTable: string;
  /**
   * The DynamoDB table of failed alerts (partition key `pk` and sort key `sk`, strings; TTL on
   * `expiresAt`). Required.
   */
  failedTable: string;
  /**
   * Your `SQSClient` (`@aws-sdk/client-sqs`), e.g. with an endpoint or retry settings of your own.
   * Default: one made on first use, configured from the environment (`AWS_REGION` on Lambda).
   */
  sqs?: AwsSdkClient | undefined;
  /** Your `DynamoDBClient` (`@aws-sdk/client-dynamodb`). Default: one made on first use. */
  dynamodb?: AwsSdkClient | undefined;
  /**
   * A message received more than `maxStalls + 1` times without a verdict (its consumer died or
   * timed out each time) fails as a poison alert, without running its handlers, and `onError` is
   * called once. Redeliveries that this package asked for (a verdict that could not be written)
   * do not count. Default 3.
   */
  maxStalls?: number | undefined;
  /** How long an alert identity is remembered for de-duplication, in ms. Default 72 hours. */
  dedupeTtlMs?: number | undefined;
  /** How long a failed alert is kept in `failedTable`, in ms. Default 30 days. */
  keepFailedMs?: number | undefined;
  /** Longest wait for the claim and the send; beyond it the answer is `503`. Default 2,000. */
  enqueueTimeoutMs?: number | undefined;
  /**
   * Order per user (`createDynamoOrder()`), which `createReceiver({ order: 'per-user' })` needs:
   * each user is held for one alert at a time in `dedupeTable`. Default: none.
   */
  order?: DynamoOrder | undefined;
}

/** The options with their defaults, checked. */
export interface ResolvedSqsQueueOptions {
  queueUrl: string;
  /** `<account>/<name>`, from the URL: what an event's `eventSourceARN` is matched against. */
  queueKey: string;
  /** The queue's name: the failed table's partition. */
  queueName: string;
  dedupeTable: string;
  failedTable: string;
  sqs: AwsSdkClient | undefined;
  dynamodb: AwsSdkClient | undefined;
  maxStalls: number;
  dedupeTtlMs: number;
  keepFailedMs: number;
  enqueueTimeoutMs: number;
  order: DynamoOrder | undefined;
}

/** The defaults of `createSqsQueue`. */
export const SQS_QUEUE_DEFAULTS = /* @__PURE__ */ Object.freeze({
  maxStalls: 3,
  dedupeTtlMs: 72 * 3_600_000,
  keepFailedMs: 30 * 24 * 3_600_000,
  enqueueTimeoutMs: 2_000,
});

const KNOWN: readonly (keyof SqsQueueOptions)[] = [
  'queueUrl',
  'dedupeTable',
  'failedTable',
  'sqs',
  'dynamodb',
  'maxStalls',
  'dedupeTtlMs',
  'keepFailedMs',
  'enqueueTimeoutMs',
  'order',
];

function name(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new TypeError(`createSqsQueue needs ${option}: the table's name.`);
  }
  return value;
}

function client(option: string, value: unknown, pkg: string): AwsSdkClient | undefined {
  if (value === undefined) return undefined;
  const method: unknown =
    typeof value === 'object' && value !== null ? Reflect.get(value, 'send') : 0;
  if (typeof method !== 'function') {
    throw new TypeError(`${option} must be a client of ${pkg} (an object with send(command)).`);
  }
  return value as AwsSdkClient;
}

function whole(option: string, value: number | undefined, fallback: number, min: number): number {
  return integerOption(option, value ?? fallback, min);
}

/**
 * A queue URL: `http(s)://<host>/<account>/<name>`. Read without WHATWG `URL`, which refuses
 * hosts the AWS SDK sends as they are, such as an emulator's `sqs.us-east-1.127.0.0.1:4566`
 * (a host whose last label is a number must be a whole IPv4 address there).
 */
const QUEUE_URL = /^https?:\/\/[^/?#@\s]+\/([^/?#\s]+)\/([^/?#\s]+)\/?$/i;

/** `<account>/<name>` of a queue URL; a `TypeError` for anything else. */
function queueKeyOf(queueUrl: unknown): { queueKey: string; queueName: string } {
  const match = typeof queueUrl === 'string' ? QUEUE_URL.exec(queueUrl) : null;
  const [, account, queueName] = match ?? [];
  if (account === undefined || queueName === undefined) {
    throw new TypeError('queueUrl must be a queue URL, http(s)://<host>/<account>/<name>.');
  }
  return { queueKey: `${account}/${queueName}`, queueName };
}

/** Fills in the defaults; an unknown or bad option is a `TypeError` at creation. */
export function resolveSqsQueueOptions(options: SqsQueueOptions): ResolvedSqsQueueOptions {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) {
    throw new TypeError('createSqsQueue needs { queueUrl, dedupeTable, failedTable }.');
  }
  refuseUnknownOptions('createSqsQueue', options, KNOWN);
  const o = options as Partial<SqsQueueOptions>;
  return {
    queueUrl: o.queueUrl as string,
    ...queueKeyOf(o.queueUrl),
    dedupeTable: name('dedupeTable', o.dedupeTable),
    failedTable: name('failedTable', o.failedTable),
    sqs: client('sqs', o.sqs, '@aws-sdk/client-sqs'),
    dynamodb: client('dynamodb', o.dynamodb, '@aws-sdk/client-dynamodb'),
    maxStalls: whole('maxStalls', o.maxStalls, SQS_QUEUE_DEFAULTS.maxStalls, 0),
    dedupeTtlMs: whole('dedupeTtlMs', o.dedupeTtlMs, SQS_QUEUE_DEFAULTS.dedupeTtlMs, 1000),
    keepFailedMs: whole('keepFailedMs', o.keepFailedMs, SQS_QUEUE_DEFAULTS.keepFailedMs, 1000),
    enqueueTimeoutMs: whole(
      'enqueueTimeoutMs',
      o.enqueueTimeoutMs,
      SQS_QUEUE_DEFAULTS.enqueueTimeoutMs,
      1,
    ),
    order: o.order,
  };
}
