/**
 * The part of pg-boss 12's documented API (https://timgit.github.io/pg-boss/, `docs/api/*.md`) the
 * benchmarks call, declared by hand: pg-boss is installed in bench/node22 (Node >= 22.12), outside
 * the workspace, and loaded by path on Node 22 (`lib/node22.ts`).
 */
import { importNode22Package } from './node22.js';

/** `db` of the constructor and of `send`: run pg-boss's SQL on a connection of ours. */
export interface PgBossDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Constructor options (`docs/api/constructor.md`) the benchmarks set. */
export interface PgBossOptions {
  connectionString?: string;
  db?: PgBossDb;
  schema?: string;
  /** The maintenance, monitoring and queue-cache timers (pg-boss's own background work). */
  supervise?: boolean;
  schedule?: boolean;
  migrate?: boolean;
  createSchema?: boolean;
  maintenanceIntervalSeconds?: number;
  /** A `LISTEN` connection that wakes the workers of queues created with `notify: true`. */
  useListenNotify?: boolean;
  /** How often queue statistics (the cached `readyCount`...) are computed, and read back. */
  superviseIntervalSeconds?: number;
  monitorIntervalSeconds?: number;
  queueCacheIntervalSeconds?: number;
  /** Size of pg-boss's own pool. */
  max?: number;
}

/** `send` options (`docs/api/jobs.md`). */
export interface SendOptions {
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  db?: PgBossDb;
}

/** `work` options (`docs/api/workers.md`). */
export interface WorkOptions {
  batchSize?: number;
  localConcurrency?: number;
  pollingIntervalSeconds?: number;
  notifyPollingIntervalSeconds?: number;
  burstWhenReadyExceeds?: number;
  burstWhenBatchFull?: boolean;
}

/** A job handed to a `work` handler. */
export interface PgBossJob<T> {
  id: string;
  data: T;
}

export interface PgBoss {
  on(event: 'error' | 'warning', listener: (error: unknown) => void): this;
  start(): Promise<this>;
  stop(options?: { graceful?: boolean; timeout?: number }): Promise<void>;
  getQueue(name: string): Promise<object | null>;
  createQueue(name: string, options?: { notify?: boolean }): Promise<void>;
  send(name: string, data: object, options?: SendOptions): Promise<string | null>;
  /** Deletes the queue's jobs, whatever their state. */
  deleteAllJobs(name?: string): Promise<number | null>;
  work<T>(
    name: string,
    options: WorkOptions,
    handler: (jobs: PgBossJob<T>[]) => Promise<unknown>,
  ): Promise<string>;
}

export interface PgBossModule {
  PgBoss: new (options: PgBossOptions) => PgBoss;
}

/** pg-boss from bench/node22 (in a process on Node >= 22.12). */
export async function loadPgBoss(): Promise<PgBossModule> {
  return (await importNode22Package('pg-boss')) as PgBossModule;
}
