/**
 * Running Next.js from tests and benchmarks: `next build` / `next start` of an app directory as
 * child processes with their output captured, and waiting for what they print.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** A `next` child process: its output so far and its exit. */
export interface NextRun {
  child: ChildProcess;
  /** stdout + stderr so far (or their last `keepLast` characters). */
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface NextRunOptions {
  /** Added to the environment (which has no NODE_ENV: `next build` and `next start` choose it). */
  env?: Record<string, string>;
  /** Start the process as the leader of its own process group (to kill the group later). */
  detached?: boolean;
  /** Keep only the last this many characters of output. Default: all of it. */
  keepLast?: number;
  /** The `node` binary to run Next with. Default: this process's. */
  node?: string;
  /**
   * The whole environment instead of this process's (still with telemetry off and no NODE_ENV):
   * a build that must see none of the variables the test process may have.
   */
  replaceEnv?: boolean;
}

/** The `next` binary that `appDir` resolves (its own dependency, or a workspace one above it). */
export function nextBinOf(appDir: string): string {
  const packageJson = createRequire(join(appDir, 'package.json')).resolve('next/package.json');
  return join(packageJson, '..', 'dist', 'bin', 'next');
}

/**
 * The environment for Next's commands: telemetry off, and no NODE_ENV (vitest sets "test"); with
 * `inherit` false, only `PATH` and `HOME` of this process's.
 */
export function nextEnv(extra: Record<string, string> = {}, inherit = true): NodeJS.ProcessEnv {
  const base = inherit
    ? process.env
    : { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
  const env: Record<string, string | undefined> = {
    ...base,
    NEXT_TELEMETRY_DISABLED: '1',
    ...extra,
  };
  delete env.NODE_ENV; // `next build` and `next start` choose it themselves
  return env as NodeJS.ProcessEnv;
}

/** Runs `next <args>` in `appDir` with `nextEnv` plus `options.env`. */
export function runNextCommand(
  appDir: string,
  args: readonly string[],
  options: NextRunOptions = {},
): NextRun {
  const child = spawn(options.node ?? process.execPath, [nextBinOf(appDir), ...args], {
    cwd: appDir,
    env: nextEnv(options.env, options.replaceEnv !== true),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const { keepLast } = options;
  let output = '';
  const append = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    if (keepLast !== undefined && output.length > keepLast) output = output.slice(-keepLast);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/**
 * Resolves with the first defined value of `predicate` over the process's output; rejects if the
 * process exits first, or after `timeoutMs` when given.
 */
export function waitForOutput<T>(
  run: NextRun,
  predicate: (output: string) => T | undefined,
  timeoutMs?: number,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const check = (): void => {
      const found = predicate(run.output());
      if (found === undefined) return;
      cleanup();
      resolve(found);
    };
    const onExit = (): void => {
      cleanup();
      reject(new Error(`next exited:\n${run.output().slice(-4000)}`));
    };
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            cleanup();
            reject(new Error(`next not ready in ${timeoutMs} ms:\n${run.output().slice(-4000)}`));
          }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      run.child.stdout?.off('data', check);
      run.child.off('exit', onExit);
    };
    run.child.stdout?.on('data', check);
    run.child.once('exit', onExit);
    check();
  });
}

/** Waits for `next start` to print its local URL and "Ready in"; resolves with the URL. */
export async function nextStarted(run: NextRun, timeoutMs?: number): Promise<string> {
  const url = await waitForOutput(
    run,
    (output) => /Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1],
    timeoutMs,
  );
  await waitForOutput(run, (output) => (output.includes('Ready in') ? true : undefined), timeoutMs);
  return url;
}

/** The newest modification time of a file, or of any file under a directory; 0 when missing. */
export function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}
