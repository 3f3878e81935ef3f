import { defineConfig } from 'vitest/config';

// Tests import workspace packages by name; the `@churn-risk/source` export condition points them at
// `src/`, so `pnpm test` needs no build. A separate test (test/dist) builds and imports `dist/`.
const conditions = ['@churn-risk/source', 'module', 'node', 'development|production'];

// @churn-risk/postgres needs Node >= 22.12 (pg-boss 12): under an older Node its tests are left to
// test/postgres/node-versions.test.ts, which runs them under the npm package node@22 with the package's
// own vitest config.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const postgresNode = major > 22 || (major === 22 && minor >= 12);

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@churn-risk/source'] } },
  test: {
    // .ci/run sets CHURN_RISK_TEST_JSON to a path and reads the counts from vitest's JSON report.
    reporters: process.env.CHURN_RISK_TEST_JSON
      ? ['default', ['json', { outputFile: process.env.CHURN_RISK_TEST_JSON }]]
      : ['default'],
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'bench/src/**/*.test.ts',
    ],
    exclude: [
      '**/node_modules/**',
      '**/dist/**',
      '**/.next/**',
      ...(postgresNode ? [] : ['packages/postgres/**']),
    ],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    typecheck: {
      enabled: true,
      include: ['packages/*/src/**/*.test-d.ts', 'test/**/*.test-d.ts'],
      tsconfig: './tsconfig.typetest.json',
    },
  },
});
