import { afterAll, describe, expect, it } from 'vitest';
import {
  failuresOf,
  killRunningChildren,
  runVitestUnder,
} from '../../../../test/runtimes/vitest-under-node.js';

// Queue mode's tests (this package's `*.aws-test.ts`) load the AWS SDK,
// which the root config's `module` export condition resolves to builds Node cannot load. They run
// here, in a child process, with packages/lambda/vitest.config.ts (the same conditions less
// `module`); each test file starts its own fauxqs and dynalite on 127.0.0.1.

afterAll(() => {
  killRunningChildren();
});

describe('queue mode on the SQS and DynamoDB emulators', () => {
  it(
    'passes the package tests (contract with two consumers, order per user, failures, consumer deaths, poison, hops, CLI, missing queue and tables, emulator queue URLs)',
    async () => {
      const run = await runVitestUnder(process.execPath, ['packages/lambda/src'], {
        args: ['--config', 'packages/lambda/vitest.config.ts'],
        timeoutMs: 8 * 60_000,
      });
      const { report } = run;
      expect(report, `no JSON report:\n${run.output}`).toBeDefined();
      if (report === undefined) return;
      const failures = failuresOf(report);
      console.log(
        `queue mode on emulators: ${report.numPassedTests} passed, ${report.numFailedTests} failed ` +
          `in ${run.seconds.toFixed(1)} s`,
      );
      expect(failures, failures.join('\n')).toEqual([]);
      expect(report.numPendingTests).toBe(0);
      expect(report.numPassedTests).toBeGreaterThanOrEqual(38);
      expect(run.exitCode, run.output).toBe(0);
    },
    9 * 60_000,
  );
});
