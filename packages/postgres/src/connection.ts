import pg from 'pg';
import { isPool, type PostgresConnection } from './options.js';

/** A pool and whether the store made it (and so closes it). */
export interface OwnedPool {
  pool: pg.Pool;
  owned: boolean;
}

/**
 * The pool of `connection`: the user's `pg.Pool` as it is, or a new one (with a connection
 * time-out of `connectTimeoutMs`, so that a database that does not answer is an error, not a wait).
 */
export function openPool(connection: PostgresConnection, connectTimeoutMs: number): OwnedPool {
  if (isPool(connection)) return { pool: connection, owned: false };
  const config: pg.PoolConfig =
    typeof connection === 'string' ? { connectionString: connection } : { ...connection };
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
