import { afterAll, describe, expect, it } from 'vitest';
import { failuresOf, killRunningChildren, runVitestUnder } from '../runtimes/vitest-under-node.js';

// Queue mode's load and faults scenario (sqs-load.aws-test.ts) loads the AWS SDK, which the root
// config's `module` export condition resolves to builds Node cannot load: it runs here, in a
// child process, with packages/lambda/vitest.config.ts.

afterAll(() => {
  killRunningChildren();
});

describe('queue mode on SQS and DynamoDB emulators, under load', () => {
  it(
    '5,000 alerts, 3 producers, 2 consumers, one killed mid-batch: each handled, none twice but the killed batch',
    async () => {
      const run = await runVitestUnder(process.execPath, ['test/load/sqs-load.aws-test.ts'], {
        args: ['--config', 'packages/lambda/vitest.config.ts'],
        timeoutMs: 8 * 60_000,
      });
      const { report } = run;
      expect(report, `no JSON report:\n${run.output}`).toBeDefined();
      if (report === undefined) return;
      for (const line of run.output.split('\n'))
        if (line.startsWith('sqs load:')) console.log(line);
      const failures = failuresOf(report);
      expect(failures, `${failures.join('\n')}\n${run.output}`).toEqual([]);
      expect(report.numPassedTests).toBe(1);
      expect(run.exitCode, run.output).toBe(0);
    },
    9 * 60_000,
  );
});
