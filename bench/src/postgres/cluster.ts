/**
 * The PostgreSQL cluster of one `pnpm bench postgres` run (`startPostgres` of
 * `@churn-risk/postgres/testing`: its own cluster in a temporary folder, 127.0.0.1, a free port,
 * fsync off), restarted once with `pg_stat_statements` loaded, and a database per server so that
 * each server's statements and transactions are counted apart.
 */
import pg from 'pg';
import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';

/** What one database did, read from `pg_stat_statements` (immediate) and the WAL position. */
const COUNTERS = `
  SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS "walBytes",
    coalesce(sum(s.calls), 0)::float8 AS statements,
    coalesce(sum(s.calls) FILTER (WHERE s.query = 'COMMIT'), 0)::float8 AS commits,
    coalesce(sum(s.total_exec_time), 0)::float8 AS "execMs"
  FROM pg_database d LEFT JOIN pg_stat_statements s ON s.dbid = d.oid
  WHERE d.datname = $1`;

/** Without pg_stat_statements: the WAL position alone. */
const WAL_ONLY = `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS "walBytes"`;

/** A database's totals from `pg_stat_database` (flushed by a backend when it exits). */
const TOTALS = `
  SELECT xact_commit::float8 AS commits, xact_rollback::float8 AS rollbacks,
    tup_inserted::float8 AS inserted, tup_updated::float8 AS updated,
    tup_deleted::float8 AS deleted
  FROM pg_stat_database WHERE datname = $1`;

/** One statement of a database, from `pg_stat_statements`. */
export interface StatementStat {
  query: string;
  calls: number;
  rows: number;
  walBytes: number;
  meanMs: number;
}

export interface BenchCluster {
  server: PostgresServer;
  /** Whether `pg_stat_statements` could be loaded (contrib is part of Debian's package). */
  statements: boolean;
  /** The URL of database `name`. */
  url(name: string): string;
  createDatabase(name: string): Promise<void>;
  /** WAL position, and the database's statements, commits and execution time so far. */
  counters(name: string): Promise<Record<string, number>>;
  /** Waits until no client is connected to the database, so that its statistics are flushed. */
  settled(name: string): Promise<void>;
  totals(name: string): Promise<Record<string, number>>;
  /** The database's statements, most called first. */
  topStatements(name: string, limit: number): Promise<StatementStat[]>;
  /** Bytes of the tables and indexes of `schema` in database `name`. */
  schemaBytes(name: string, schema: string): Promise<number>;
  /** A query on database `name`. */
  query(name: string, text: string, values?: unknown[]): Promise<pg.QueryResult>;
  stop(): Promise<void>;
}

async function once(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

export async function startBenchCluster(binDir: string): Promise<BenchCluster> {
  const server = await startPostgres({ binDir });
  const stopOnExit = (): void => {
    try {
      process.kill(server.pid, 'SIGKILL'); // this process exits midway (Ctrl-C)
    } catch {
      // gone
    }
  };
  process.once('exit', stopOnExit);
  const url = (name: string): string => server.url.replace(/\/postgres$/, `/${name}`);
  let statements = false;
  try {
    const available = await once(
      server.url,
      `SELECT 1 FROM pg_available_extensions WHERE name = 'pg_stat_statements'`,
    );
    if (available.rowCount === 1) {
      await once(server.url, `ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
      await server.stop();
      await server.start();
      await once(server.url, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      statements = true;
    }
  } catch (error) {
    await server.stop();
    server.cleanup();
    throw error;
  }
  const admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on('error', () => undefined);
  return {
    server,
    statements,
    url,
    async createDatabase(name) {
      await admin.query(`CREATE DATABASE ${name}`);
    },
    async counters(name) {
      const { rows } = await admin.query(
        statements ? COUNTERS : WAL_ONLY,
        statements ? [name] : [],
      );
      return { ...(rows[0] as Record<string, number>) };
    },
    async settled(name) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { rows } = await admin.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
          [name],
        );
        if ((rows[0] as { n: number }).n === 0 || Date.now() > deadline) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async totals(name) {
      const { rows } = await admin.query(TOTALS, [name]);
      return { ...(rows[0] as Record<string, number>) };
    },
    async topStatements(name, limit) {
      if (!statements) return [];
      const { rows } = await admin.query(
        `SELECT s.query, s.calls::float8 AS calls, s.rows::float8 AS rows,
           s.wal_bytes::float8 AS "walBytes", s.mean_exec_time AS "meanMs"
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
         WHERE d.datname = $1 ORDER BY s.calls DESC LIMIT $2`,
        [name, limit],
      );
      return rows as StatementStat[];
    },
    async schemaBytes(name, schema) {
      const { rows } = await once(
        url(name),
        `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = 'r'`,
        [schema],
      );
      return (rows[0] as { bytes: number }).bytes;
    },
    query: (name, text, values = []) => once(url(name), text, values),
    async stop() {
      await admin.end().catch(() => undefined);
      await server.stop();
      server.cleanup();
      process.off('exit', stopOnExit);
    },
  };
}
