/**
 * Runs the servers of servers.ts against the run's PostgreSQL cluster (`cluster.ts`): each server
 * in its own child process on Node >= 22.12 and its own database (schema `churn_risk`), rounds
 * interleaved (`lib/queue-measure.ts`), the cluster's CPU time, WAL and statements read around
 * each round, and each database's totals once its server is gone.
 */
import {
  measureQueueServers,
  type JobCount,
  type MeasureOptions,
  type QueueRound,
} from '../lib/queue-measure.js';
import type { BenchCluster, StatementStat } from './cluster.js';

/** The schema of every server's tables (one database per server). */
export const SCHEMA = 'churn_risk';

/** The database of server `name`: `bench_express_ours_postgres`... */
export const databaseOf = (name: string): string => `bench_${name.replaceAll('-', '_')}`;

/**
 * Alerts left waiting in `database`: in pg-boss's job table for the hand-written pg-boss routes,
 * else through our queue's own `counts()` (waiting and delayed), so that this does not depend on
 * how `@churn-risk/postgres` lays out its tables. NaN when it cannot be read.
 */
export async function waitingAlerts(
  cluster: BenchCluster,
  database: string,
  pgBoss: boolean,
): Promise<number> {
  try {
    if (pgBoss) {
      const { rows } = await cluster.query(
        database,
        `SELECT count(*)::int AS n FROM ${SCHEMA}.job WHERE state = 'created'`,
      );
      return (rows[0] as { n: number }).n;
    }
    const { createPostgresQueue } = await import('@churn-risk/postgres');
    const queue = createPostgresQueue({ connection: cluster.url(database), schema: SCHEMA });
    try {
      const counts = await queue.counts();
      return counts.waiting + counts.delayed;
    } finally {
      await queue.close();
    }
  } catch (error) {
    console.error(
      `postgres: could not count the alerts waiting in ${database}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return Number.NaN;
  }
}

/** What a server's database holds and did, over the whole run (start-up included). */
export interface DatabaseTotals {
  /** `pg_stat_database`: commits, rollbacks, rows inserted, updated, deleted. */
  totals: Record<string, number>;
  /** Bytes of the schema's tables and indexes. */
  schemaBytes: number;
  statements: StatementStat[];
}

export interface PostgresMeasurement {
  rounds: Map<string, QueueRound[]>;
  jobs: Map<string, JobCount>;
  databases: Map<string, DatabaseTotals>;
}

export async function measurePostgresServers(
  names: readonly string[],
  options: MeasureOptions,
  cluster: BenchCluster,
  node: string,
): Promise<PostgresMeasurement> {
  for (const name of names) await cluster.createDatabase(databaseOf(name));
  const { rounds, jobs } = await measureQueueServers(names, options, {
    serverFile: 'postgres/server.ts',
    serverArgs: (name) => [name, cluster.url(databaseOf(name)), SCHEMA],
    execPath: node,
    pid: cluster.server.pid,
    usesStore: () => true,
    storedJobs: (name) => waitingAlerts(cluster, databaseOf(name), name.includes('hand-pgboss')),
    counters: (name) => cluster.counters(databaseOf(name)),
  });
  const databases = new Map<string, DatabaseTotals>();
  for (const name of names) {
    const database = databaseOf(name);
    await cluster.settled(database); // the servers are gone: their backends flushed their stats
    databases.set(name, {
      totals: await cluster.totals(database),
      schemaBytes: await cluster.schemaBytes(database, SCHEMA),
      statements: await cluster.topStatements(database, 8),
    });
  }
  return { rounds, jobs, databases };
}
