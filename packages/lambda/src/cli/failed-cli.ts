import {
  runFailedCli as runCli,
  failedCliHelp,
  type CliIo,
  type FailedCliBackend,
} from '@churn-risk/core/cli';
import { withTimeout, type QueueHealth } from '@churn-risk/core/store';
import { SqsQueueError, type SqsResourceOption } from '../sqs/sqs-errors.js';
import { createSqsQueue } from '../sqs/sqs-queue.js';

/** The environment variable of the failed table's name (`--table` overrides it). */
const TABLE_ENV = 'CHURN_RISK_FAILED_TABLE';

/** The flag of each option the CLI sets (it never reads the dedupe table). */
const FLAGS: Partial<Record<SqsResourceOption, string>> = {
  queueUrl: '--queue-url',
  failedTable: '--table',
};

/** A missing queue or table, said for the command line: named by its flag, not its option. */
function forTheCommandLine(error: unknown): never {
  const flag = error instanceof SqsQueueError ? FLAGS[error.option] : undefined;
  if (error instanceof SqsQueueError && flag !== undefined) {
    const said = new SqsQueueError(error.option, error.resource, error.awsError);
    said.message = error.message
      .replace(`(createSqsQueue's \`${error.option}\`)`, `(${flag})`)
      .replace(`\`${error.option}\``, flag);
    throw said;
  }
  throw error;
}

/**
 * `churn-risk-sqs`: the failed-set CLI of `@churn-risk/core/cli` on an SQS queue's failed table.
 * The AWS SDK finds the region and credentials as usual (`AWS_REGION`, `AWS_PROFILE`, ...), and
 * an endpoint of its own in `AWS_ENDPOINT_URL_SQS` and `AWS_ENDPOINT_URL_DYNAMODB` (local
 * emulators).
 */
export const SQS_CLI: FailedCliBackend = {
  bin: 'churn-risk-sqs',
  store: 'SQS and DynamoDB',
  urlFlag: 'queue-url',
  urlEnv: 'CHURN_RISK_QUEUE_URL',
  schemes: ['https', 'http'],
  scope: {
    flag: 'table',
    help: `The failed table (default: the ${TABLE_ENV} environment variable)`,
  },
  keptBy: 'kept in the DynamoDB failed table by @churn-risk/lambda (createSqsQueue)',
  // A queue URL holds no secret: the account and the queue's name.
  describe: (url) => url,
  open(url, table, timeoutMs) {
    const failedTable = table ?? process.env[TABLE_ENV];
    if (failedTable === undefined || failedTable === '') {
      throw new TypeError(`--table <name> is required (or set $${TABLE_ENV}).`);
    }
    // List and retry use the queue and the failed table only (never the dedupe table).
    const queue = createSqsQueue({ queueUrl: url, dedupeTable: '-', failedTable });
    const health = async (): Promise<QueueHealth> => {
      try {
        await withTimeout(
          Promise.all([queue.depth(), queue.failed({ limit: 1 })]),
          timeoutMs,
          'no answer',
        );
        return { reachable: true };
      } catch (error) {
        // A queue or table that does not exist is answered, not unreachable: its own line.
        if (error instanceof SqsQueueError) forTheCommandLine(error);
        return { reachable: false, error: error instanceof Error ? error.message : String(error) };
      }
    };
    return {
      queue: {
        failed: (options) => queue.failed(options).catch(forTheCommandLine),
        retry: (id) => queue.retry(id).catch(forTheCommandLine),
        retryAll: () => queue.retryAll().catch(forTheCommandLine),
        health,
        close: () => queue.close(),
      },
    };
  },
};

/** The help text of `churn-risk-sqs`. */
export const HELP = failedCliHelp(SQS_CLI);

/**
 * `churn-risk-sqs failed list|retry [ID|--all] --queue-url <url> --table <name>`: resolves with
 * the exit code. SQS and the table are asked first whether they answer, within 5 s; if not, one
 * line naming the queue goes to `io.err` and the code is 1.
 */
export function runFailedCli(args: readonly string[], io: CliIo): Promise<number> {
  return runCli(SQS_CLI, args, io);
}
