import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root: children run from there so that `--import tsx` resolves. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The packages are measured as users run them: their built `dist/` (`pnpm bench` builds first).
 * `BENCH_FROM_SOURCE=1` measures the TypeScript sources instead, through tsx, whose transform
 * (`keepNames`) wraps every named closure in a helper call and so inflates the cost of our code.
 */
export const PACKAGE_CONDITIONS: readonly string[] =
  process.env.BENCH_FROM_SOURCE === '1' ? ['--conditions=@churn-risk/source'] : [];

const live = new Set<ChildProcess>();

function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

/** A child process that speaks to us over IPC. */
export interface BenchChild<M> {
  process: ChildProcess;
  /** The first IPC message the child sent (its "ready" message: port, URL...). */
  ready: M;
  /** Waits for the next IPC message. */
  next<T>(timeoutMs?: number): Promise<T>;
  send(message: unknown): void;
  /** Kills the child (SIGKILL: a server with queued 2 s handlers would otherwise linger). */
  kill(): Promise<void>;
}

function nextMessage<T>(child: ChildProcess, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`child ${child.pid ?? '?'} sent nothing within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: unknown): void => {
      cleanup();
      resolve(message as T);
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`child ${child.pid ?? '?'} exited with code ${code ?? 'null'}`));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/**
 * Starts `file` (TypeScript, relative to bench/src) in a child Node process that resolves the
 * workspace packages to their builds (see `PACKAGE_CONDITIONS`), and waits for its first IPC
 * message. `execPath`: another Node binary (pg-boss 12 needs Node >= 22.12).
 */
export async function startChild<M>(
  file: string,
  args: readonly string[] = [],
  nodeFlags: readonly string[] = [],
  execPath: string = process.execPath,
): Promise<BenchChild<M>> {
  const path = fileURLToPath(new URL(`../${file}`, import.meta.url));
  const child = fork(path, [...args], {
    cwd: REPO_ROOT,
    execPath,
    execArgv: [...PACKAGE_CONDITIONS, '--import', 'tsx', ...nodeFlags],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let ready: M;
  try {
    ready = await nextMessage<M>(child, 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    process: child,
    ready,
    next: <T>(timeoutMs = 120_000) => nextMessage<T>(child, timeoutMs),
    send: (message) => child.send(message as never),
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** In a child: sends a message to the parent (no-op when not started with IPC). */
export function tellParent(message: unknown): void {
  process.send?.(message);
}
