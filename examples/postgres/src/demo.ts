/**
 * `pnpm demo:postgres`: the sandbox, a real PostgreSQL 15 cluster of its own, two web processes
 * and one worker process.
 * Many watched users cross their threshold, the worker is killed with SIGKILL mid-alert and
 * started again, and the demo checks that every alert the sandbox delivered was handled. Exits 0
 * when it was, non-zero otherwise; every process it started is stopped on the way out. The
 * scenario is examples/durable-demo's, shared with the Redis example; `demo/backend.ts` is what is
 * Postgres's own.
 */
import { runDurableDemo } from '@churn-risk/example-durable-demo';
import { postgresBackend } from './demo/backend.js';

await runDurableDemo(postgresBackend);
