import { createRequire } from 'node:module';
import type * as DynamoDbSdk from '@aws-sdk/client-dynamodb';
import type * as SqsSdk from '@aws-sdk/client-sqs';

/**
 * An AWS SDK for JavaScript v3 client, as queue mode uses it: an `SQSClient` of
 * `@aws-sdk/client-sqs` or a `DynamoDBClient` of `@aws-sdk/client-dynamodb` (typed by the one
 * method called, so that these types need neither package).
 */
export interface AwsSdkClient {
  /** Sends a command of the client's package (`new SendMessageCommand(...)`, ...). */
  send(command: never): Promise<unknown>;
}

/** Sends `command` with `client`, typed by its output. */
export function send<T>(client: AwsSdkClient, command: unknown): Promise<T> {
  return client.send(command as never) as Promise<T>;
}

function missing(name: string, error: unknown): Error {
  return new Error(
    `Queue mode needs ${name} (Lambda's Node runtimes ship it; elsewhere: npm install ${name}).`,
    { cause: error },
  );
}

// Loaded with require(): it finds the SDK that Lambda's Node runtimes provide (on NODE_PATH,
// which import() does not read) as well as one installed beside the function, and it loads the
// SDK's CommonJS build in Node, whatever export conditions the caller's tooling adds.
const load = createRequire(import.meta.url);

let sqsSdk: Promise<typeof SqsSdk> | undefined;
let dynamoDbSdk: Promise<typeof DynamoDbSdk> | undefined;

function required<T>(name: string): Promise<T> {
  return new Promise<T>((resolve) => {
    resolve(load(name) as T);
  }).catch((error: unknown) => {
    throw missing(name, error);
  });
}

/**
 * `@aws-sdk/client-sqs`, loaded on first use: an optional peer dependency, so that a function
 * in in-memory mode imports this package without it. A failed load is not kept.
 */
export function sqsModule(): Promise<typeof SqsSdk> {
  sqsSdk ??= required<typeof SqsSdk>('@aws-sdk/client-sqs');
  sqsSdk.catch(() => {
    sqsSdk = undefined;
  });
  return sqsSdk;
}

/** `@aws-sdk/client-dynamodb`, loaded on first use, as `sqsModule`. */
export function dynamoDbModule(): Promise<typeof DynamoDbSdk> {
  dynamoDbSdk ??= required<typeof DynamoDbSdk>('@aws-sdk/client-dynamodb');
  dynamoDbSdk.catch(() => {
    dynamoDbSdk = undefined;
  });
  return dynamoDbSdk;
}

/** The name DynamoDB gives a refused condition. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** An error as one line, without anything but its name and message. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : 'a non-Error value';
}
