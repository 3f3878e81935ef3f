import { describeWebHealthz } from '@churn-risk/example-durable-demo/testing';
import { startPostgres } from '@churn-risk/postgres/testing';
import { fileURLToPath } from 'node:url';
import { pgBossNode } from '../src/demo/node-binary.js';

// src/web.ts loads pg-boss 12 (Node >= 22.12): it runs under this Node when it is 22.12 or later,
// else under the example's own node@22 (src/demo/node-binary.ts).
describeWebHealthz({
  queue: 'postgres',
  title: 'Postgres',
  exampleRoot: fileURLToPath(new URL('..', import.meta.url)),
  urlVariable: 'DATABASE_URL',
  node: pgBossNode,
  startServer: () => startPostgres(),
  downTimeoutMs: 15_000,
  testTimeoutMs: 60_000,
});
