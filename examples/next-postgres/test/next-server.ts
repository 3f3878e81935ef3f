/**
 * The example under `next build` and `next start` on Node 22 (the workspace's node@22), each
 * server the leader of its own process group so that SIGSTOP/SIGCONT reach every process of it.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  newestMtime,
  nextBinOf,
  nextEnv,
  nextStarted,
  type NextRun,
} from '../../../test/support/next-process.js';

export const exampleDir = fileURLToPath(new URL('..', import.meta.url));
const root = join(exampleDir, '..', '..');
/** The npm package node@22 that test/package.json installs. */
export const NODE22 = join(root, 'test', 'node_modules', 'node22', 'bin', 'node');

/** Runs `next <args>` in the example on Node 22, detached (its own process group). */
export function runNext(args: readonly string[], env: Record<string, string> = {}): NextRun {
  if (!existsSync(NODE22)) {
    throw new Error(`${NODE22} is missing: run \`npx -y pnpm@10 install\` at the repository root.`);
  }
  const child = spawn(NODE22, [nextBinOf(exampleDir), ...args], {
    cwd: exampleDir,
    env: nextEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const append = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/** Resolves once `run` exited 0; rejects with its output otherwise. */
export async function succeeded(run: NextRun, what: string): Promise<void> {
  const { code } = await run.exited;
  if (code !== 0)
    throw new Error(`${what} failed (exit ${String(code)}):\n${run.output().slice(-4000)}`);
}

/** Builds the workspace packages the app imports (their dist/) when missing or older than src/. */
export async function buildWorkspacePackages(): Promise<void> {
  for (const name of ['core', 'next', 'postgres', 'redis']) {
    const dir = join(root, 'packages', name);
    const entry = join(dir, 'dist', 'index.js');
    if (existsSync(entry) && statSync(entry).mtimeMs >= newestMtime(join(dir, 'src'))) continue;
    const build = spawn('npm', ['run', 'build', '--silent'], {
      cwd: dir,
      env: nextEnv(),
      stdio: 'inherit',
    });
    const code = await new Promise<number | null>((resolve) => build.once('exit', resolve));
    if (code !== 0) throw new Error(`building packages/${name} failed (exit ${String(code)})`);
  }
}

/** A `next start` of the example on a free port of 127.0.0.1. */
export interface Server {
  run: NextRun;
  url: string;
  /** Sends `signal` to the server's process group. */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL to the group (a stopped group too), and waits for the exit. */
  kill(): Promise<void>;
}

/** Starts `next start` with `env` and waits until it serves. */
export async function startServer(env: Record<string, string>): Promise<Server> {
  const run = runNext(['start', '--port', '0', '--hostname', '127.0.0.1'], env);
  const pid = run.child.pid;
  if (pid === undefined) throw new Error('next start did not start');
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-pid, name);
    } catch {
      // the group is gone
    }
  };
  const kill = async (): Promise<void> => {
    signal('SIGKILL');
    await run.exited;
  };
  try {
    return { run, url: await nextStarted(run, 120_000), signal, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}
