import { afterAll, expect, it } from 'vitest';
import { failuresOf, killRunningChildren, runVitestUnder } from '../runtimes/vitest-under-node.js';

// The operations API over SQS and DynamoDB (sqs.aws-test.ts) loads the AWS SDK, which the root
// config's `module` export condition resolves to builds Node cannot load: it runs in a child
// process with packages/lambda/vitest.config.ts.

afterAll(() => {
  killRunningChildren();
});

it(
  'passes the operations API suite over SQS and DynamoDB (fauxqs and dynalite)',
  async () => {
    const run = await runVitestUnder(process.execPath, ['test/ops/sqs.aws-test.ts'], {
      args: ['--config', 'packages/lambda/vitest.config.ts'],
      timeoutMs: 4 * 60_000,
    });
    const { report } = run;
    expect(report, `no JSON report:\n${run.output}`).toBeDefined();
    if (report === undefined) return;
    const failures = failuresOf(report);
    expect(failures, failures.join('\n')).toEqual([]);
    expect(report.numPassedTests).toBe(2);
    expect(run.exitCode, run.output).toBe(0);
  },
  5 * 60_000,
);
