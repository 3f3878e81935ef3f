import {
  runFailedCli as runCli,
  failedCliHelp,
  type CliIo,
  type FailedCliBackend,
} from '@churn-risk/core/cli';
import { describeConnection } from '../connection.js';
import { PostgresSchemaError } from '../errors.js';
import { openPostgresStore } from '../postgres-store.js';

/** The store's schema error, said for the command line: the schema and the `--schema` flag. */
function forTheCommandLine(error: unknown): never {
  if (error instanceof PostgresSchemaError) {
    throw new PostgresSchemaError(
      error.schema,
      `${error.message} Name the queue's schema with --schema <name> (default churn_risk); ` +
        'this command creates and migrates nothing.',
    );
  }
  throw error;
}

/** `churn-risk-postgres`: the failed-set CLI of `@churn-risk/core/cli` on a Postgres store. */
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
    // Never creates or migrates: a schema without the tables is an error naming it.
    const store = openPostgresStore({
      connection: { connectionString: url, max: 2, connectionTimeoutMillis: timeoutMs },
      ...(schema === undefined ? {} : { schema }),
      listen: false,
    });
    return {
      queue: {
        failed: (options) => store.failed(options).catch(forTheCommandLine),
        retry: (id) => store.retry(id).catch(forTheCommandLine),
        retryAll: () => store.retryAll().catch(forTheCommandLine),
        // The CLI names the place itself: the reason alone, without "Postgres at <where>: ".
        health: async () => {
          const health = await store.health();
          const prefix = `Postgres at ${describeConnection(url)}: `;
          const error = health.error?.startsWith(prefix)
            ? health.error.slice(prefix.length)
            : health.error;
          return error === undefined ? health : { ...health, error };
        },
        close: () => store.close(),
      },
    };
  },
};

/** The help text of `churn-risk-postgres`. */
export const HELP = failedCliHelp(POSTGRES_CLI);

/**
 * `churn-risk-postgres failed list|retry [ID|--all] --database <url>` (or `DATABASE_URL`):
 * resolves with the exit code. The database is asked first whether it answers, within 5 s; if
 * not, one line naming the host, port and database (never the user or the password) goes to
 * `io.err` and the code is 1. A schema that holds no tables of this package is an error naming
 * the schema and `--schema`; the command creates and migrates nothing.
 */
export function runFailedCli(args: readonly string[], io: CliIo): Promise<number> {
  return runCli(POSTGRES_CLI, args, io);
}
