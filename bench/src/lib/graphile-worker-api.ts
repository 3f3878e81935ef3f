/**
 * The part of graphile-worker 0.18's documented API (https://worker.graphile.org/docs/library/run,
 * `library/add-job`, `library/logger`) the benchmarks call, declared by hand: graphile-worker is
 * installed in bench/node22 (Node >= 22.18), outside the workspace, and loaded by path on Node 22
 * (`lib/node22.ts`).
 */
import { importNode22Package } from './node22.js';

/** A task of the task list: the job's payload and graphile-worker's helpers. */
export type Task = (payload: unknown, helpers: unknown) => Promise<void> | void;

/** `(level, message, meta)`: one log line of a scope. */
export type LogFunction = (level: string, message: string, meta?: unknown) => void;

/** `new Logger(logFactory)`: graphile-worker's logger, built from a factory of log functions. */
export type LoggerClass = new (factory: (scope: unknown) => LogFunction) => object;

/** `run()` options (`RunnerOptions`). */
export interface RunnerOptions {
  connectionString?: string;
  concurrency?: number;
  noHandleSignals?: boolean;
  pollInterval?: number;
  taskList: Record<string, Task>;
  logger?: object;
  schema?: string;
}

export interface Runner {
  stop(): Promise<void>;
  promise: Promise<void>;
}

/** `makeWorkerUtils()`: `addJob` and `migrate` on a pool of its own. */
export interface WorkerUtils {
  addJob(identifier: string, payload: unknown, spec?: { maxAttempts?: number }): Promise<unknown>;
  migrate(): Promise<void>;
  release(): Promise<void>;
}

export interface GraphileWorkerModule {
  run(options: RunnerOptions): Promise<Runner>;
  makeWorkerUtils(options: { connectionString: string; logger?: object }): Promise<WorkerUtils>;
  Logger: LoggerClass;
}

/** graphile-worker from bench/node22 (in a process on Node >= 22.18). */
export async function loadGraphileWorker(): Promise<GraphileWorkerModule> {
  return (await importNode22Package('graphile-worker')) as GraphileWorkerModule;
}

/** A logger that keeps warnings and errors (on stderr) and drops the per-job info lines. */
export function quietLogger(module: GraphileWorkerModule): object {
  return new module.Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') console.error(`graphile-worker: ${message}`);
  });
}
