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

let sqsSdk: Promise<typeof SqsSdk> | undefined;
let dynamoDbSdk: Promise<typeof DynamoDbSdk> | undefined;

/**
 * `@aws-sdk/client-sqs`, imported on first use: an optional peer dependency, so that a function
 * in in-memory mode imports this package without it. A failed import is not kept.
 */
export function sqsModule(): Promise<typeof SqsSdk> {
  sqsSdk ??= import('@aws-sdk/client-sqs').catch((error: unknown) => {
    sqsSdk = undefined;
    throw missing('@aws-sdk/client-sqs', error);
  });
  return sqsSdk;
}

/** `@aws-sdk/client-dynamodb`, imported on first use, as `sqsModule`. */
export function dynamoDbModule(): Promise<typeof DynamoDbSdk> {
  dynamoDbSdk ??= import('@aws-sdk/client-dynamodb').catch((error: unknown) => {
    dynamoDbSdk = undefined;
    throw missing('@aws-sdk/client-dynamodb', error);
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
