import { describeWebHealthz } from '@churn-risk/example-durable-demo/testing';
import { startPostgres } from '@churn-risk/postgres/testing';
import { fileURLToPath } from 'node:url';
import { processNode } from '../src/demo/node-binary.js';

// src/web.ts under this Node (or NODE_BINARY), against a real PostgreSQL.
describeWebHealthz({
  queue: 'postgres',
  title: 'Postgres',
  exampleRoot: fileURLToPath(new URL('..', import.meta.url)),
  urlVariable: 'DATABASE_URL',
  node: processNode,
  startServer: () => startPostgres(),
  downTimeoutMs: 15_000,
  testTimeoutMs: 60_000,
});
