import { defineConfig } from 'vitest/config';

// Tests import workspace packages by name; the `@churn-risk/source` export condition points them at
// `src/`, so `pnpm test` needs no build. A separate test (test/dist) builds and imports `dist/`.
const conditions = ['@churn-risk/source', 'module', 'node', 'development|production'];

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
    exclude: ['**/node_modules/**', '**/dist/**', '**/.next/**'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    typecheck: {
      enabled: true,
      include: ['packages/*/src/**/*.test-d.ts', 'test/**/*.test-d.ts'],
      tsconfig: './tsconfig.typetest.json',
    },
  },
});
