import {
  runFailedCli as runCli,
  failedCliHelp,
  type CliIo,
  type FailedCliBackend,
} from '@churn-risk/core/cli';
import { describeConnection } from '../connection.js';
import { createPostgresQueue } from '../postgres-queue.js';

/** `churn-risk-postgres`: the failed-set CLI of `@churn-risk/core/cli` on a Postgres queue. */
export const POSTGRES_CLI: FailedCliBackend = {
  bin: 'churn-risk-postgres',
  store: 'Postgres',
  urlFlag: 'database',
  urlEnv: 'DATABASE_URL',
  schemes: ['postgres', 'postgresql'],
  scope: { flag: 'schema', help: "The queue's schema (default churn_risk)" },
  keptBy: 'kept in Postgres by @churn-risk/postgres (createPostgresQueue)',
  describe: describeConnection,
  open(url, schema, timeoutMs) {
    const queue = createPostgresQueue({
      connection: { connectionString: url, max: 2, connectionTimeoutMillis: timeoutMs },
      ...(schema === undefined ? {} : { schema }),
      enqueueTimeoutMs: timeoutMs,
    });
    return { queue };
  },
};

/** The help text of `churn-risk-postgres`. */
export const HELP = failedCliHelp(POSTGRES_CLI);

/**
 * `churn-risk-postgres failed list|retry [ID|--all] --database <url>`: resolves with the exit
 * code. The database is asked first whether it answers, within 5 s; if not, one line naming the
 * host (never the user or the password) goes to `io.err` and the code is 1.
 */
export function runFailedCli(args: readonly string[], io: CliIo): Promise<number> {
  return runCli(POSTGRES_CLI, args, io);
}
