import { defineConfig } from 'vitest/config';

// The tests of @churn-risk/postgres run under Node >= 22.12 (pg-boss 12's range): the root suite
// runs them with this config in a child process under the npm package node@22
// (test/postgres/node-versions.test.ts). Not the root config's `module` condition: it resolves
// @opentelemetry/api (which pg-boss imports) to an ES build that Node cannot load.
const conditions = ['@churn-risk/source', 'node', 'development|production'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@churn-risk/source'] } },
  test: {
    root: import.meta.dirname,
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
  },
});
