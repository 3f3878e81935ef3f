import { spawn, type ChildProcess } from 'node:child_process';

/** A process of the demo (a web or worker process) and its stdout, line by line. */
export interface Child {
  readonly name: string;
  readonly pid: number;
  /** Every complete stdout line so far. */
  readonly lines: string[];
  /** Resolves with the exit code, or the signal that ended it. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** Whether it is still running. */
  running(): boolean;
  /** Resolves with the first line that matches; rejects if the process exits first. */
  waitForLine(match: RegExp): Promise<string>;
  /** Sends `signal` (when still running) and waits for the exit; SIGKILL after `timeoutMs`. */
  stop(signal: NodeJS.Signals, timeoutMs?: number): Promise<number | NodeJS.Signals | null>;
}

/** Where and on which Node a child runs. */
export interface ChildOptions {
  /** The example's folder: `script` is relative to it, and tsx and its packages resolve from it. */
  cwd: string;
  /** The Node binary. Default this process's (`process.execPath`). */
  node?: string | undefined;
}

/**
 * Runs `script` of an example from source (`node --conditions=@churn-risk/source --import tsx`)
 * with extra environment variables; stderr goes to the demo's stderr.
 */
export function startChild(
  name: string,
  script: string,
  env: Record<string, string>,
  { cwd, node = process.execPath }: ChildOptions,
): Child {
  const child: ChildProcess = spawn(
    node,
    ['--conditions=@churn-risk/source', '--import', 'tsx', script],
    { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve(code ?? signal);
    });
  });
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  let pending = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const parts = (pending + chunk).split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
    for (const listener of [...listeners]) listener();
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;

  return {
    name,
    pid: child.pid ?? -1,
    lines,
    exited,
    running,
    waitForLine(match) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const line = lines.find((candidate) => match.test(candidate));
          if (line === undefined) return;
          listeners.delete(check);
          resolve(line);
        };
        listeners.add(check);
        check();
        void exited.then((how) => {
          listeners.delete(check);
          reject(new Error(`${name} exited (${String(how)}) before printing ${String(match)}`));
        });
      });
    },
    async stop(signal, timeoutMs = 15_000) {
      if (!running()) return exited;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
}
