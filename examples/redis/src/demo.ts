/**
 * `pnpm demo:redis`: the sandbox, a real redis-server, two web processes and one worker process.
 * Many watched users cross their threshold, the worker is killed with SIGKILL mid-alert and
 * started again, and the demo checks that every alert the sandbox delivered was handled. Exits 0
 * when it was, non-zero otherwise; every process it started is stopped on the way out. The
 * scenario is examples/durable-demo's, shared with the Postgres example; `demo/backend.ts` is
 * what is Redis's own.
 */
import { runDurableDemo } from '@churn-risk/example-durable-demo';
import { redisBackend } from './demo/backend.js';

await runDurableDemo(redisBackend);
