import pg from 'pg';
import { isPool, type PostgresConnection } from './options.js';

/** How long a pool the store opens waits for a connection (its own bound, not the accept's). */
export const CONNECT_TIMEOUT_MS = 5_000;

/** A pool and whether the store made it (and so closes it). */
export interface OwnedPool {
  pool: pg.Pool;
  owned: boolean;
}

/** The `pg` client settings of `connection` (for the pool, and the `LISTEN` client beside it). */
export function clientConfig(connection: PostgresConnection): pg.ClientConfig {
  if (typeof connection === 'string') return { connectionString: connection };
  if (isPool(connection)) return { ...(connection.options as pg.ClientConfig) };
  return { ...connection };
}

/**
 * The pool of `connection`: the user's `pg.Pool` as it is, or a new one (with a connection
 * time-out of `connectTimeoutMs` unless the options set one, so that a database that does not
 * answer is an error, not a wait).
 */
export function openPool(connection: PostgresConnection, connectTimeoutMs: number): OwnedPool {
  if (isPool(connection)) return { pool: connection, owned: false };
  const config: pg.PoolConfig = { ...(clientConfig(connection) as pg.PoolConfig) };
  config.connectionTimeoutMillis ??= connectTimeoutMs;
  config.application_name ??= 'churn-risk';
  const pool = new pg.Pool(config);
  // An idle client that loses its server emits 'error' on the pool; the next query reports it.
  pool.on('error', () => undefined);
  return { pool, owned: true };
}

/** `host:port/database` of a connection, for messages: never a user name or a password. */
export function describeConnection(connection: PostgresConnection): string {
  if (typeof connection === 'string') {
    try {
      const url = new URL(connection);
      const database = url.pathname.replace(/^\//, '');
      return `${url.hostname}${url.port === '' ? '' : `:${url.port}`}${database === '' ? '' : `/${database}`}`;
    } catch {
      return '(an unparsable URL)';
    }
  }
  const options = isPool(connection) ? connection.options : connection;
  if (options.connectionString !== undefined) return describeConnection(options.connectionString);
  const host = options.host ?? process.env.PGHOST ?? 'localhost';
  const port = options.port ?? process.env.PGPORT;
  const database = options.database ?? process.env.PGDATABASE;
  return `${host}${port === undefined ? '' : `:${String(port)}`}${database === undefined ? '' : `/${database}`}`;
}

/** SQLSTATEs whose server message names the user (authentication and authorization). */
const NAMES_THE_USER = /^28/;

/**
 * The message of a database error, safe to log: what the server said, without the user name
 * (`password authentication failed for user "app"` becomes `password authentication failed: the
 * user name or the password is wrong`), and never a password (the server never sends one).
 */
export function safeMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  if (code === '28P01') {
    return 'password authentication failed: the user name or the password is wrong';
  }
  let message = error.message;
  if (typeof code === 'string' && NAMES_THE_USER.test(code)) {
    message = message.replace(/\b(user|role) "(?:[^"]|"")*"/g, '$1 (not shown)');
  }
  if (message === '') message = error.name;
  return message;
}

/**
 * Runs `use` on `client`, checked out of a pool, then releases it. A checked-out client has no
 * listener of the pool's, so a connection lost between queries would be an unhandled `'error'`
 * event: one is listened for meanwhile (the query in flight rejects with the same error), and a
 * connection that broke is released as broken, so the pool drops it. `drop(error)` says whether
 * an error of `use` ends the connection too (default: every error; a refused statement leaves a
 * usable one).
 */
export async function withClient<T>(
  client: pg.PoolClient,
  use: (client: pg.PoolClient) => Promise<T>,
  drop: (error: unknown) => boolean = () => true,
): Promise<T> {
  let broken: Error | undefined;
  const lost = (error: Error): void => {
    broken = error;
  };
  client.on('error', lost);
  try {
    return await use(client);
  } catch (error) {
    if (drop(error)) broken ??= error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.removeListener('error', lost);
    client.release(broken);
  }
}
