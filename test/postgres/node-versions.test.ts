/**
 * @churn-risk/postgres runs on every supported Node. The root suite runs its tests
 * under the Node that runs the suite (20 included); this file also runs them under the npm packages
 * node@22 and node@26 (installed in test/ as `node22` and `node26`: the oldest and the newest LTS
 * line of the version matrix; node@24 runs the conformance suite in test/runtimes), each in a child process with the package's own vitest config. Each test file
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

describe.each([22, 26])('@churn-risk/postgres under Node %i', (major) => {
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
    'passes the package tests (storeContract, CLI, options, LISTEN, least privilege, poison alert, deploys) on a real Postgres',
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
