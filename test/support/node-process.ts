import { spawn, type ChildProcess } from 'node:child_process';

/** A spawned TypeScript process and its stdout, line by line. */
export interface NodeProcess {
  child: ChildProcess;
  pid: number;
  /** Every complete stdout line so far. */
  lines: string[];
  /** Resolves with the exit code (or null when a signal ended it). */
  exited: Promise<number | null>;
  /** Resolves once `count` lines match; rejects if the process exits first. */
  waitForLines(match: RegExp, count?: number): Promise<void>;
  /** Sends `signal` when still running (default SIGKILL). */
  kill(signal?: NodeJS.Signals): void;
}

interface Waiter {
  match: RegExp;
  count: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Runs a TypeScript file from source (tsx, the `@churn-risk/source` condition) with extra
 * environment variables; stderr goes to this process's stderr. `node` is the binary (default this
 * process's; the version-matrix tests pass another).
 */
export function spawnTs(
  script: string,
  env: Record<string, string>,
  cwd?: string,
  node: string = process.execPath,
): NodeProcess {
  const child = spawn(node, ['--conditions=@churn-risk/source', '--import', 'tsx', script], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
      waiter.reject(new Error(`${script} exited before ${expected}:\n${lines.join('\n')}`));
    }
  });
  return {
    child,
    pid: child.pid ?? -1,
    lines,
    exited,
    waitForLines: (match, count = 1) =>
      new Promise((resolve, reject) => {
        waiters.push({ match, count, resolve, reject });
        check();
      }),
    kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
