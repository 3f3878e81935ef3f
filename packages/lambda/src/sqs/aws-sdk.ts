import { createRequire } from 'node:module';
import type * as DynamoDbSdk from '@aws-sdk/client-dynamodb';
import type * as SqsSdk from '@aws-sdk/client-sqs';
import { namedError, type SqsResourceOption } from './sqs-errors.js';

/**
 * An AWS SDK for JavaScript v3 client, as queue mode uses it: an `SQSClient` of
 * `@aws-sdk/client-sqs` or a `DynamoDBClient` of `@aws-sdk/client-dynamodb` (typed by the one
 * method called, so that these types need neither package).
 */
export interface AwsSdkClient {
  /** Sends a command of the client's package (`new SendMessageCommand(...)`, ...). */
  send(command: never): Promise<unknown>;
}

/** The input of each command of an SDK module, by the command's name (`PutItem`). */
type Inputs<M> = {
  [K in keyof M as K extends `${infer N}Command` ? N : never]: M[K] extends new (
    ...args: infer A
  ) => unknown
    ? NonNullable<A[0]>
    : never;
};
type DynamoDbInputs = Inputs<typeof DynamoDbSdk>;
type SqsInputs = Inputs<typeof SqsSdk>;

/** Sends commands by name, each package loaded and its default client made on first use. */
export interface AwsCalls {
  ddb<T, N extends keyof DynamoDbInputs = keyof DynamoDbInputs>(
    name: N,
    input: DynamoDbInputs[N],
  ): Promise<T>;
  sqs<T, N extends keyof SqsInputs = keyof SqsInputs>(name: N, input: SqsInputs[N]): Promise<T>;
}

// Loaded with require(): it finds the SDK that Lambda's Node runtimes provide (on NODE_PATH,
// which import() does not read) as well as one installed beside the function, and it loads the
// SDK's CommonJS build whatever export conditions the caller's tooling adds.
// Made at the first load, not at import: a bundle that never loads the SDK (the in-memory handler)
// then drops it.
let requireSdk: NodeJS.Require | undefined;
const load = (pkg: string): unknown => (requireSdk ??= createRequire(import.meta.url))(pkg);

type Module = Record<string, new (input?: unknown) => unknown>;

/** A package's commands and a client: the one given, or one made from the environment. */
function service(
  pkg: string,
  clientClass: string,
  given: AwsSdkClient | undefined,
  config: object,
): (name: string, input: unknown) => Promise<unknown> {
  let ready: { module: Module; client: AwsSdkClient } | undefined;
  return (name, input) =>
    new Promise((resolve) => {
      if (ready === undefined) {
        let module: Module;
        try {
          module = load(pkg) as Module;
        } catch (error) {
          throw new Error(`Queue mode needs ${pkg} (npm install ${pkg}).`, { cause: error });
        }
        const Client = module[clientClass] as new (config: object) => AwsSdkClient;
        ready = { module, client: given ?? new Client(config) };
      }
      const Command = ready.module[`${name}Command`] as new (input: unknown) => never;
      resolve(ready.client.send(new Command(input)));
    });
}

/**
 * The calls of one queue, on the clients given (else default ones, made on first use). An error
 * that says a table or the queue of `resources` does not exist becomes an `SqsQueueError` that
 * names its option.
 */
export function awsCalls(
  sqs: AwsSdkClient | undefined,
  dynamodb: AwsSdkClient | undefined,
  resources: Record<SqsResourceOption, string>,
): AwsCalls {
  // With an endpoint in the environment (a local emulator), that endpoint rather than the host
  // of the queue URL, which the SDK uses by default.
  const local = (process.env.AWS_ENDPOINT_URL_SQS ?? process.env.AWS_ENDPOINT_URL) !== undefined;
  const callSqs = service('@aws-sdk/client-sqs', 'SQSClient', sqs, {
    ...(local ? { useQueueUrlAsEndpoint: false } : {}),
  });
  const callDdb = service('@aws-sdk/client-dynamodb', 'DynamoDBClient', dynamodb, {});
  const fail = (input: object) => (error: unknown) => {
    throw namedError(error, input, resources);
  };
  return {
    ddb: (name, input) => callDdb(name, input).catch(fail(input)) as never,
    sqs: (name, input) => callSqs(name, input).catch(fail(input)) as never,
  };
}

/** The name DynamoDB gives a refused condition. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
