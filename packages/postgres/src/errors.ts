import { safeMessage } from './connection.js';

/**
 * An error of the Postgres store: the database refused or did not answer. Its message names the
 * place (`Postgres at host:port/database`) and carries the server's own reason (`permission denied
 * for table alerts`, `connection refused`), never a password, and a user name only in the
 * `CREATE SCHEMA ... AUTHORIZATION <role>` statement that fixes a schema the role may not create;
 * `code` is the SQLSTATE when the server sent one.
 */
export class PostgresStoreError extends Error {
  override readonly name = 'PostgresStoreError';
  /** The SQLSTATE of the server's error (e.g. `42501` for a permission denied), if any. */
  readonly code: string | undefined;

  constructor(where: string, error: unknown) {
    super(`Postgres at ${where}: ${safeMessage(error)}`);
    const code = (error as { code?: unknown } | undefined)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/**
 * The schema holds none of the store's tables, or tables of a newer version of this package. Only
 * a process that does not migrate (the CLI) meets the first: the store itself creates its tables.
 */
export class PostgresSchemaError extends Error {
  override readonly name = 'PostgresSchemaError';
  /** The schema named in the options. */
  readonly schema: string;

  constructor(schema: string, message: string) {
    super(message);
    this.schema = schema;
  }
}
