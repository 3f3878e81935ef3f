import { storeContract } from '@churn-risk/core/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { freePort, startPostgres, type PostgresServer } from '../src/testing.js';

// The store contract against @churn-risk/postgres on a real PostgreSQL: each case gets a
// schema of its own, and its two store instances share it (two processes on one database).
let postgres: PostgresServer;
let nobody: number;
beforeAll(async () => {
  postgres = await startPostgres();
  nobody = await freePort(); // nothing listens there
});
afterAll(async () => {
  await postgres?.stop();
  postgres?.cleanup();
});

storeContract(
  { describe, it },
  {
    name: 'postgres',
    create: (scope) =>
      // A short poll: the cases' takes that find nothing answer within it (LISTEN wakes them).
      createPostgresStore({
        connection: postgres.url,
        schema: `contract_${scope}`,
        pollIntervalMs: 200,
      }),
    unreachable: () =>
      createPostgresStore({
        connection: `postgres://postgres@127.0.0.1:${String(nobody)}/postgres`,
      }),
  },
);
