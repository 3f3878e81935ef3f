import { defineConfig } from 'vitest/config';

// The tests of @churn-risk/postgres, with the root config's conditions (workspace packages resolve
// to their `src/`). They run under every supported Node, 20 included: `npx vitest run --config
// packages/postgres/vitest.config.ts`; test/postgres/node-versions.test.ts also runs them with this
// config under the npm packages node@22, node@24 and node@26. Each file starts its own PostgreSQL.
const conditions = ['@churn-risk/source', 'module', 'node', 'development|production'];

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
