import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: vitest runs there, with the repository's own config. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The binary of the npm package `node@<major>` installed in `test/` as `node<major>`. */
export function nodeBinary(major: number): string {
  return join(REPO_ROOT, 'test', 'node_modules', `node${major}`, 'bin', 'node');
}

/** The parts of vitest's JSON report read here. */
interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

/** The outcome of one vitest run in a child process. */
export interface VitestRun {
  /** `null` when the child did not exit on its own (killed after `timeoutMs`). */
  exitCode: number | null;
  report: JsonReport | undefined;
  /** The end of the child's stdout and stderr, for failure messages. */
  output: string;
  seconds: number;
}

/** Process groups of children still running, ended when this process exits. */
const running = new Set<number>();

/** Signals a child's whole process group (vitest, its workers, servers the tests started). */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

process.once('exit', () => {
  for (const pid of running) signalGroup(pid, 'SIGKILL');
});

/** Ends every child process group this module started that is still running. */
export function killRunningChildren(): void {
  for (const pid of running) signalGroup(pid, 'SIGKILL');
  running.clear();
}

/** The environment of the child: the parent's, without what makes vitest think it is nested. */
function childEnv(): NodeJS.ProcessEnv {
  // VITEST, VITEST_WORKER_ID, VITEST_POOL_ID...; CHURN_RISK_TEST_JSON is .ci/run's report path.
  const nested = (name: string): boolean =>
    name.startsWith('VITEST') || name === 'CHURN_RISK_TEST_JSON';
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of Object.keys(env)) if (nested(name)) Reflect.deleteProperty(env, name);
  return env;
}

/**
 * Runs `vitest run <paths>` from the repository root under `binary`, with the JSON reporter, as a
 * process group of its own. After `timeoutMs` the whole group is killed; once the child exits, any
 * process it left behind in its group is killed too. Never rejects for a failing run.
 */
export async function runVitestUnder(
  binary: string,
  paths: readonly string[],
  { args = [], timeoutMs }: { args?: readonly string[]; timeoutMs: number },
): Promise<VitestRun> {
  const dir = mkdtempSync(join(tmpdir(), 'churn-risk-node-matrix-'));
  const reportFile = join(dir, 'report.json');
  const started = performance.now();
  const vitest = join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const child = spawn(
    binary,
    [
      vitest,
      'run',
      ...paths,
      '--typecheck.enabled=false', // the type tests do not depend on the Node version
      '--reporter=json',
      `--outputFile=${reportFile}`,
      ...args,
    ],
    { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const pid = child.pid;
  if (pid !== undefined) running.add(pid);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = `${output}${chunk.toString('utf8')}`.slice(-6000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
  }, timeoutMs);
  const exitCode = await new Promise<number | null>((resolve) => {
    child.once('error', (error) => {
      keep(Buffer.from(`\ncould not start ${binary}: ${error.message}`));
      resolve(null);
    });
    child.once('close', (code) => {
      resolve(code);
    });
  });
  clearTimeout(timer);
  if (pid !== undefined) {
    signalGroup(pid, 'SIGKILL'); // anything the run left behind
    running.delete(pid);
  }
  if (timedOut) keep(Buffer.from(`\nkilled after ${timeoutMs} ms`));
  let report: JsonReport | undefined;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport;
  } catch {
    report = undefined; // the run crashed before writing it: `output` says why
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    exitCode: timedOut ? null : exitCode,
    report,
    output,
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * Every failure in a report: failed tests by full name with the first line of their error, and
 * test files that failed without a failed test (an import or a hook that threw).
 */
export function failuresOf(report: JsonReport): string[] {
  const failures: string[] = [];
  for (const file of report.testResults) {
    const failed = file.assertionResults.filter((test) => test.status === 'failed');
    for (const test of failed) {
      const reason = (test.failureMessages?.[0] ?? '').split('\n')[0] ?? '';
      failures.push(`${file.name.replace(REPO_ROOT, '')} > ${test.fullName}: ${reason}`);
    }
    if (file.status === 'failed' && failed.length === 0) {
      const reason = (file.message ?? '').split('\n')[0] ?? '';
      failures.push(`${file.name.replace(REPO_ROOT, '')}: ${reason}`);
    }
  }
  return failures;
}
