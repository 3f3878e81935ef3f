import { ChurnRiskError } from '@churn-risk/core';
import { safeMessage } from './connection.js';

/**
 * An error of the Postgres store: the database refused or did not answer. Its message names the
 * place (`Postgres at host:port/database`) and carries the server's own reason (`permission denied
 * for table alerts`, `connection refused`), never a password, and a user name only in the
 * `CREATE SCHEMA ... AUTHORIZATION <role>` statement that fixes a schema the role may not create;
 * `code` is the SQLSTATE when the server sent one (the driver's code, such as `ECONNREFUSED`, when
 * the socket failed; `POSTGRES_FAILED` when there is neither).
 */
export class PostgresStoreError extends ChurnRiskError {
  override readonly name = 'PostgresStoreError';
  /**
   * The SQLSTATE of the server's error (e.g. `42501` for a permission denied), else the driver's
   * code (`ECONNREFUSED`), else `POSTGRES_FAILED`.
   */
  declare readonly code: string;

  constructor(where: string, error: unknown) {
    super(`Postgres at ${where}: ${safeMessage(error)}`);
    const code = (error as { code?: unknown } | undefined)?.code;
    this.code = typeof code === 'string' && code !== '' ? code : 'POSTGRES_FAILED';
  }
}

/**
 * The schema holds none of the store's tables, or tables of a newer version of this package. Only
 * a process that does not migrate (the CLI) meets the first: the store itself creates its tables.
 * `code` is `SCHEMA_MISMATCH`.
 */
export class PostgresSchemaError extends ChurnRiskError {
  override readonly name = 'PostgresSchemaError';
  override readonly code = 'SCHEMA_MISMATCH' as const;
  /** The schema named in the options. */
  readonly schema: string;

  constructor(schema: string, message: string) {
    super(message);
    this.schema = schema;
  }
}
