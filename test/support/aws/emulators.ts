// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- dynalite ships no types, and this declaration must reach every tsconfig that imports this file
/// <reference path="./dynalite.d.ts" />
/**
 * SQS and DynamoDB without AWS, for queue mode's tests: fauxqs (SQS) and dynalite
 * (DynamoDB) from the npm registry, both in this process, each on a free port of 127.0.0.1, and
 * stopped by `stop()`. Each test file starts its own pair.
 *
 * Where they differ from AWS in a way that matters, the tests pin our side: fauxqs takes a
 * `DelaySeconds` over 900 (AWS refuses it), dynalite has no TTL (an expired item stays until we
 * overwrite it) and does not return the old item when a condition fails.
 */
import type { CreateTableCommandInput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import dynalite from 'dynalite';
import { buildApp } from 'fauxqs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AWS_REGION, dynamoDbSdk, sqsSdk } from './sdk.js';

export { AWS_REGION, dynamoDbSdk, sqsSdk } from './sdk.js';

const { CreateQueueCommand, GetQueueAttributesCommand, SQSClient: SqsClient } = sqsSdk;
const { CreateTableCommand, DynamoDBClient: DynamoClient } = dynamoDbSdk;

/** The (fake) credentials the emulators are called with. */
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

/** A queue made on the emulator. */
export interface TestQueue {
  queueUrl: string;
  queueArn: string;
}

/** The two tables of queue mode. */
export interface TestTables {
  dedupeTable: string;
  failedTable: string;
}

/** A running pair of emulators. */
export interface AwsEmulators {
  /** `http://127.0.0.1:<port>` of fauxqs and of dynalite. */
  sqsEndpoint: string;
  dynamoDbEndpoint: string;
  /** Clients on the emulators (the tests' own; give `createSqsQueue` its own with `clients()`). */
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  /** Fresh clients on the emulators, as a function instance makes them. */
  clients(): { sqs: SQSClient; dynamodb: DynamoDBClient };
  /**
   * The environment a child process needs so that the SDK's default clients reach the emulators
   * (`AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL_DYNAMODB`, region, fake credentials).
   */
  env: Record<string, string>;
  /** A standard queue named `name`, with this visibility timeout (seconds). */
  createQueue(name: string, visibilityTimeoutS?: number): Promise<TestQueue>;
  /** The dedupe and failed tables, named `<prefix>-identities` and `<prefix>-failed`. */
  createTables(prefix: string): Promise<TestTables>;
  /** Visible, in flight and delayed messages of a queue (exact on fauxqs). */
  messages(queueUrl: string): Promise<{ visible: number; inFlight: number; delayed: number }>;
  stop(): Promise<void>;
}

function dedupeTableInput(name: string): CreateTableCommandInput {
  return {
    TableName: name,
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

function failedTableInput(name: string): CreateTableCommandInput {
  return {
    TableName: name,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/** How the emulators are started. */
export interface AwsEmulatorOptions {
  /**
   * The host of fauxqs's queue URLs, `http://sqs.<region>.<queueHost>:<port>/<account>/<name>`
   * (fauxqs's `host`, its CLI's `FAUXQS_HOST`). Default: fauxqs's own, `localhost`.
   */
  queueHost?: string;
}

/** Starts fauxqs and dynalite in this process on free ports of 127.0.0.1. */
export async function startAwsEmulators(options: AwsEmulatorOptions = {}): Promise<AwsEmulators> {
  const fauxqs = buildApp({
    logger: false,
    ...(options.queueHost === undefined ? {} : { host: options.queueHost }),
  });
  const sqsAddress = await fauxqs.listen({ port: 0, host: '127.0.0.1' });
  // In memory (no path), tables ready at once.
  const dynamo: Server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => dynamo.listen(0, '127.0.0.1', resolve));
  const sqsEndpoint = sqsAddress.replace('localhost', '127.0.0.1');
  const dynamoDbEndpoint = `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`;
  const clients = (): { sqs: SQSClient; dynamodb: DynamoDBClient } => ({
    sqs: new SqsClient({ endpoint: sqsEndpoint, region: AWS_REGION, credentials: CREDENTIALS }),
    dynamodb: new DynamoClient({
      endpoint: dynamoDbEndpoint,
      region: AWS_REGION,
      credentials: CREDENTIALS,
    }),
  });
  const { sqs, dynamodb } = clients();
  return {
    sqsEndpoint,
    dynamoDbEndpoint,
    sqs,
    dynamodb,
    clients,
    env: {
      AWS_ENDPOINT_URL_SQS: sqsEndpoint,
      AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint,
      AWS_REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    async createQueue(name, visibilityTimeoutS = 30) {
      const { QueueUrl } = await sqs.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: { VisibilityTimeout: String(visibilityTimeoutS) },
        }),
      );
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      return { queueUrl: QueueUrl ?? '', queueArn: Attributes?.QueueArn ?? '' };
    },
    async createTables(prefix) {
      const tables = { dedupeTable: `${prefix}-identities`, failedTable: `${prefix}-failed` };
      await dynamodb.send(new CreateTableCommand(dedupeTableInput(tables.dedupeTable)));
      await dynamodb.send(new CreateTableCommand(failedTableInput(tables.failedTable)));
      return tables;
    },
    async messages(queueUrl) {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesNotVisible',
            'ApproximateNumberOfMessagesDelayed',
          ],
        }),
      );
      return {
        visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
        inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
        delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
      };
    },
    async stop() {
      sqs.destroy();
      dynamodb.destroy();
      await fauxqs.close();
      await new Promise<void>((resolve) => dynamo.close(() => resolve()));
    },
  };
}
