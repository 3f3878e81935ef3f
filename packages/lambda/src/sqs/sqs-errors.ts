import { ChurnRiskError } from '@churn-risk/core';

/** The options of `createSqsQueue` that name an AWS resource. */
export type SqsResourceOption = 'queueUrl' | 'dedupeTable' | 'failedTable';

/**
 * A resource that queue mode was given does not exist where its client looks (its account and
 * region): the SQS queue of `queueUrl` (`code` `QUEUE_NOT_FOUND`), or the DynamoDB table of
 * `dedupeTable` or `failedTable` (`TABLE_NOT_FOUND`). The message names the option, the resource
 * and what to do; of the AWS error it keeps only the name (no request, no body).
 */
export class SqsQueueError extends ChurnRiskError {
  override readonly name = 'SqsQueueError';
  /** `QUEUE_NOT_FOUND` or `TABLE_NOT_FOUND`. */
  declare readonly code: 'QUEUE_NOT_FOUND' | 'TABLE_NOT_FOUND';

  /**
   * @param option the option that names the resource
   * @param resource the queue's URL or the table's name, as the option gave it
   * @param awsError the name of the AWS error (`ResourceNotFoundException`, `QueueDoesNotExist`)
   */
  constructor(
    readonly option: SqsResourceOption,
    readonly resource: string,
    readonly awsError: string,
  ) {
    const queue = option === 'queueUrl';
    const client = queue ? 'SQS' : 'DynamoDB';
    super(
      `The ${client} ${queue ? 'queue' : 'table'} ${resource} (createSqsQueue's \`${option}\`) ` +
        `does not exist in the ${client} client's account and region (${awsError}): create it, ` +
        `or set \`${option}\` to an existing one.`,
    );
    this.code = queue ? 'QUEUE_NOT_FOUND' : 'TABLE_NOT_FOUND';
  }
}

/**
 * `error` as an `SqsQueueError` when it says that the table or the queue of `input` (a command's
 * input) does not exist and `resources` names it; else `error` itself. DynamoDB says
 * `ResourceNotFoundException` (also while a table is being created); SQS says
 * `QueueDoesNotExist`, whose code in the query protocol is `AWS.SimpleQueueService.NonExistentQueue`.
 */
export function namedError(
  error: unknown,
  input: { TableName?: unknown; QueueUrl?: unknown },
  resources: Record<SqsResourceOption, string>,
): unknown {
  const { name, Code } = (error ?? {}) as { name?: unknown; Code?: unknown };
  const option = (['dedupeTable', 'failedTable', 'queueUrl'] as const).find((o) =>
    o === 'queueUrl'
      ? input.QueueUrl === resources.queueUrl &&
        (name === 'QueueDoesNotExist' || Code === 'AWS.SimpleQueueService.NonExistentQueue')
      : input.TableName === resources[o] && name === 'ResourceNotFoundException',
  );
  return option ? new SqsQueueError(option, resources[option], String(name)) : error;
}
