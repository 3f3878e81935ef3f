/**
 * SPEC 15: @churn-risk/postgres runs on pg-boss 12, which needs Node >= 22.12, so the root suite
 * (which may run on Node 20) runs the package's tests under the npm packages node@22, node@24 and
 * node@26 (installed in test/ as `node22`, `node24`, `node26`, the version matrix's Nodes), each in
 * a child process with the package's own vitest config. Each test file
 * starts its own PostgreSQL cluster (Debian's PostgreSQL 15, provisioned by scripts/provision.sh).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeAvailability } from '../runtimes/runtime-process.js';
import {
  failuresOf,
  killRunningChildren,
  nodeBinary,
  runVitestUnder,
} from '../runtimes/vitest-under-node.js';

const RUN_TIMEOUT_MS = 10 * 60_000;

afterAll(() => {
  killRunningChildren();
});

describe.each([22, 24, 26])('@churn-risk/postgres under Node %i', (major) => {
  const binary = nodeBinary(major);
  const { skip, failure } = runtimeAvailability(
    `Node ${major}`,
    existsSync(binary)
      ? { path: binary }
      : { missing: `the npm package node@${major} has no binary at ${binary}` },
  );

  beforeAll(() => {
    if (failure !== undefined) throw new Error(failure);
  });

  it.skipIf(skip)(
    'passes the package tests (storeContract, CLI, options, poison alert, deploys) on a real Postgres',
    async () => {
      const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
      expect(version.startsWith(`v${major}.`), version).toBe(true);
      const run = await runVitestUnder(binary, [], {
        args: ['--config', 'packages/postgres/vitest.config.ts'],
        timeoutMs: RUN_TIMEOUT_MS,
      });
      const { report } = run;
      expect(report, `no JSON report from Node ${version}:\n${run.output}`).toBeDefined();
      if (report === undefined) return;
      const failures = failuresOf(report);
      console.log(
        `@churn-risk/postgres on Node ${version}: ${report.numPassedTests} passed, ` +
          `${report.numFailedTests} failed, ${report.numPendingTests} skipped in ` +
          `${run.seconds.toFixed(1)} s`,
      );
      expect(failures, `failed under Node ${version}:\n${failures.join('\n')}`).toEqual([]);
      expect(report.numPendingTests).toBe(0);
      expect(report.numPassedTests).toBeGreaterThan(40);
      expect(run.exitCode, run.output).toBe(0);
    },
    RUN_TIMEOUT_MS + 60_000,
  );
});
