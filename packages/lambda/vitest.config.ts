import { defineConfig } from 'vitest/config';

// Queue mode's tests on the SQS and DynamoDB emulators (files `*.aws-test.ts`). The root suite runs
// them with this config in a child process (packages/lambda/src/sqs/aws-emulators.test.ts,
// test/load/sqs-load.test.ts and test/ops/ops-sqs.test.ts). Not the root config's `module`
// condition: it resolves the AWS SDK's packages (@smithy/core, @aws-sdk/core) to their `dist-es`
// builds, whose extensionless imports Node cannot load.
const conditions = ['@churn-risk/source', 'node', 'development|production'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@churn-risk/source'] } },
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: [
      'packages/lambda/src/**/*.aws-test.ts',
      'test/load/**/*.aws-test.ts',
      'test/ops/**/*.aws-test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
