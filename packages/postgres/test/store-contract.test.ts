import { storeContract } from '@churn-risk/core/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { freePort, startPostgres, type PostgresServer } from '../src/testing.js';

// The store contract of SPEC 17 against @churn-risk/postgres on a real PostgreSQL: each case gets a
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
    // A generous enqueue time-out (also the pool's connect time-out): the contract checks what is
    // stored, not how fast, and 20 parallel accepts on a loaded machine queue for the pool's 10
    // connections behind one row lock (2 s was exceeded once in a dozen runs under load).
    create: (scope) =>
      createPostgresStore({
        connection: postgres.url,
        schema: `contract_${scope}`,
        enqueueTimeoutMs: 15_000,
      }),
    unreachable: () =>
      createPostgresStore({
        connection: `postgres://postgres@127.0.0.1:${String(nobody)}/postgres`,
        enqueueTimeoutMs: 500,
      }),
  },
);
