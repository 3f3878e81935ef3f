/**
 * The Node version matrix: the core unit tests and the conformance suite (every Node
 * adapter, in-memory and Redis mode) run under Node 22, 24 and 26 (npm packages `node@N`,
 * installed in test/ as `node22`...) as well as under the machine's Node, which runs this file.
 * Each version runs vitest in a child process of its own, with the JSON reporter.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeAvailability } from './runtime-process.js';
import {
  failuresOf,
  killRunningChildren,
  nodeBinary,
  runVitestUnder,
  type VitestRun,
} from './vitest-under-node.js';

const VERSIONS = [22, 24, 26] as const;
const PATHS = ['packages/core/src', 'test/conformance'];
/** A run of every path under one version, on a loaded 2-core machine, stays well inside this. */
const RUN_TIMEOUT_MS = 15 * 60_000;

afterAll(() => {
  killRunningChildren(); // a run cut short by a failed or timed-out test
});

describe.each(VERSIONS)('Node %i', (major) => {
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
    'passes the core unit tests and the conformance suite',
    async () => {
      const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
      expect(version.startsWith(`v${major}.`), version).toBe(true);

      const run: VitestRun = await runVitestUnder(binary, PATHS, { timeoutMs: RUN_TIMEOUT_MS });
      const { report } = run;
      expect(report, `no JSON report from Node ${version}:\n${run.output}`).toBeDefined();
      if (report === undefined) return;
      const failures = failuresOf(report);
      console.log(
        `Node ${version}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ` +
          `${report.numPendingTests} skipped in ${run.seconds.toFixed(1)} s`,
      );
      expect(failures, `failed under Node ${version}:\n${failures.join('\n')}`).toEqual([]);
      expect(report.numPassedTests).toBeGreaterThan(0);
      expect(run.exitCode, run.output).toBe(0);
    },
    RUN_TIMEOUT_MS + 60_000,
  );
});
