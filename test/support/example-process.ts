import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A spawned example server (`examples/<name>/src/server.ts`) and its stdout, line by line. */
export interface ExampleProcess {
  child: ChildProcess;
  /** The base URL from its first line, `listening on <url>`. */
  url: string;
  /** Every complete stdout line so far. */
  lines: string[];
  /** The file its alert log appends `processed <userId>` lines to. */
  logFile: string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Resolves once `count` lines match; rejects if the process exits first. */
  waitForLines(match: RegExp, count?: number): Promise<void>;
  /** Kills it if still running and removes its temporary folder. */
  cleanup(): void;
}

interface Waiter {
  match: RegExp;
  count: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Starts `examples/<name>/src/server.ts` from source on a free port, with the given webhook
 * secret and handler work time, and resolves once it printed its URL.
 */
export async function startExample(
  name: string,
  options: { secret: string; workMs: number },
): Promise<ExampleProcess> {
  const dir = mkdtempSync(join(tmpdir(), `churn-risk-${name}-`));
  const logFile = join(dir, 'alerts.log');
  const child = spawn(
    process.execPath,
    ['--conditions=@churn-risk/source', '--import', 'tsx', 'src/server.ts'],
    {
      cwd: join(repoRoot, 'examples', name),
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: '0',
        CHURN_RISK_WEBHOOK_SECRET: options.secret,
        ALERT_LOG_FILE: logFile,
        ALERT_WORK_MS: String(options.workMs),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines: string[] = [];
  const waiters: Waiter[] = [];
  const check = (): void => {
    for (const waiter of [...waiters]) {
      if (lines.filter((line) => waiter.match.test(line)).length < waiter.count) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  let pending = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
    check();
  });
  child.once('exit', () => {
    for (const waiter of waiters.splice(0)) {
      const expected = `${waiter.count} × ${String(waiter.match)}`;
      waiter.reject(new Error(`exited before ${expected}:\n${lines.join('\n')}`));
    }
  });
  const waitForLines = (match: RegExp, count = 1): Promise<void> =>
    new Promise((resolve, reject) => {
      waiters.push({ match, count, resolve, reject });
      check();
    });

  await waitForLines(/^listening on /);
  return {
    child,
    url: (lines.find((line) => line.startsWith('listening on ')) ?? '').slice(
      'listening on '.length,
    ),
    lines,
    logFile,
    exited,
    waitForLines,
    cleanup() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
