/**
 * What the durable demo needs to know about a back end: how to start a throwaway server for the
 * queue, how the example's processes find it, and the few words that differ in the report. The
 * scenario itself (two web processes, a worker killed mid-alert and restarted, the tally) is the
 * same for every back end.
 */
export interface DemoBackend {
  /** In the temporary folder's name, `churn-risk-<id>-demo-`: `redis`, `postgres`. */
  id: string;
  /** The server as the first step names it: `Redis`, `PostgreSQL`. */
  title: string;
  /** The example's folder, whose `src/web.ts` and `src/worker.ts` the demo runs. */
  exampleRoot: string;
  /** The variable both processes read the queue's URL from: `REDIS_URL`, `DATABASE_URL`. */
  urlVariable: string;
  /**
   * The Node that runs the web and worker processes, when the back end chooses it (the Postgres
   * demo takes `NODE_BINARY`); the demo says which. Default this process's, and nothing said.
   */
  node?: () => string;
  /** Worker variables besides `CONCURRENCY`, `WORK_MS` and `LOCK_MS` (`RECLAIM_MS`). */
  workerEnv?: Record<string, string>;
  /** Where an alert answered 202 is: `every one of them is in Redis`. */
  accepted: string;
  /**
   * How a new worker takes over a dead worker's alerts, given `LOCK_MS`: the end of the step title
   * `Start the worker again: …`.
   */
  takeover(lockMs: number): string;
  /** Starts a throwaway server; throws `StoreMissingError` when there is none installed. */
  startServer(): Promise<DemoServer>;
}

/** A server the demo started for the queue. */
export interface DemoServer {
  /** The URL the processes get in `urlVariable`. */
  url: string;
  /** The first step's line about it: `redis-server (pid 4242) on redis://127.0.0.1:40001`. */
  description: string;
  /**
   * A line about the queue once every delivery was accepted while no worker ran (Redis: its
   * waiting and active counts); none when left out.
   */
  describeQueue?(): Promise<string>;
  /** Stops it (and any handle the demo opened on it) and removes its files. */
  stop(): Promise<void>;
  /** Synchronous last resort on an abrupt exit: SIGKILL, and its files removed. */
  kill(): void;
}

/** Thrown when the back end's server is not installed; its message names the install command. */
export class StoreMissingError extends Error {
  override readonly name = 'StoreMissingError';
}
