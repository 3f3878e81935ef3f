/** The options of `createSqsQueue` that name an AWS resource. */
export type SqsResourceOption = 'queueUrl' | 'dedupeTable' | 'failedTable';

/** What each table must hold, as its creation needs it. */
const TABLE_SHAPES: Readonly<Record<Exclude<SqsResourceOption, 'queueUrl'>, string>> = {
  dedupeTable: 'partition key `pk` (string), TTL on `expiresAt`',
  failedTable: 'partition key `pk` and sort key `sk` (strings), TTL on `expiresAt`',
};

/**
 * A resource that queue mode was given does not exist where its clients look (their account and
 * region): the SQS queue of `queueUrl` (`code` `QUEUE_NOT_FOUND`), or the DynamoDB table of
 * `dedupeTable` or `failedTable` (`TABLE_NOT_FOUND`). The message names the option, the resource
 * and what to do; it carries nothing of the AWS error but its name (no request, no body).
 */
export class SqsQueueError extends Error {
  override readonly name = 'SqsQueueError';
  /** `QUEUE_NOT_FOUND` or `TABLE_NOT_FOUND`. */
  readonly code: 'QUEUE_NOT_FOUND' | 'TABLE_NOT_FOUND';
  /** The option that names the resource. */
  readonly option: SqsResourceOption;
  /** The queue's URL, or the table's name. */
  readonly resource: string;
  /** The name of the AWS error (`ResourceNotFoundException`, `QueueDoesNotExist`). */
  readonly awsError: string;

  /**
   * @param option the option that names the resource
   * @param resource the queue's URL or the table's name, as the option gave it
   * @param awsError the name of the AWS error (`ResourceNotFoundException`, `QueueDoesNotExist`)
   * @param label how the message names the option (default: createSqsQueue's option; a command
   *   line names its flag)
   */
  constructor(option: SqsResourceOption, resource: string, awsError: string, label?: string) {
    const named = label ?? `createSqsQueue's \`${option}\``;
    super(
      option === 'queueUrl'
        ? `The SQS queue ${resource} (${named}) does not exist (${awsError}) in the account and ` +
            'region of the SQS client. Create the queue, or set ' +
            `${named} to an existing queue's URL (\`aws sqs get-queue-url --queue-name <name>\`).`
        : `The DynamoDB table "${resource}" (${named}) does not exist or is not active yet ` +
            `(${awsError}) in the account and region of the DynamoDB client. Create it ` +
            `(${TABLE_SHAPES[option]}), or set ${named} to the name of an existing table.`,
    );
    this.code = option === 'queueUrl' ? 'QUEUE_NOT_FOUND' : 'TABLE_NOT_FOUND';
    this.option = option;
    this.resource = resource;
    this.awsError = awsError;
  }
}

/** Names the SDK gives a table that does not exist (or is still being created). */
const NO_TABLE: readonly string[] = ['ResourceNotFoundException'];
/** Names and legacy codes the SDK gives a queue that does not exist (JSON and query protocols). */
const NO_QUEUE: readonly string[] = [
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
];

function awsErrorNames(error: unknown): string[] {
  if (typeof error !== 'object' || error === null) return [];
  return ['name', 'Code'].flatMap((key) => {
    const value: unknown = Reflect.get(error, key);
    return typeof value === 'string' ? [value] : [];
  });
}

/** The AWS error's name when it says the table does not exist; else `undefined`. */
export function tableNotFound(error: unknown): string | undefined {
  return awsErrorNames(error).find((name) => NO_TABLE.includes(name));
}

/** The AWS error's name when it says the queue does not exist; else `undefined`. */
export function queueNotFound(error: unknown): string | undefined {
  return awsErrorNames(error).find((name) => NO_QUEUE.includes(name));
}
