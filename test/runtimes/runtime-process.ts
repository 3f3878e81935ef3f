import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `test/` package: its `node_modules` holds the runtimes and the workspace packages. */
export const TEST_PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

const requireFromTests = createRequire(join(TEST_PACKAGE_DIR, 'package.json'));

/** Where a runtime's binary is, or why it is not there. */
export type LocatedBinary = { path: string; missing?: undefined } | { missing: string };

/** The Bun binary of the npm package `bun` (its postinstall puts it at `bin/bun.exe`). */
export function locateBun(): LocatedBinary {
  try {
    const path = join(dirname(requireFromTests.resolve('bun/package.json')), 'bin', 'bun.exe');
    if (existsSync(path)) return { path };
    return { missing: `the npm package bun has no binary at ${path} (did its postinstall run?)` };
  } catch {
    return { missing: 'the npm package bun is not installed in test/' };
  }
}

/** The Deno binary of the npm package `deno` (resolved by the package's own installer API). */
export function locateDeno(): LocatedBinary {
  try {
    const install = requireFromTests('deno/install_api.cjs') as { runInstall(): string };
    return { path: install.runInstall() };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { missing: `the npm package deno has no usable binary (${reason})` };
  }
}

/**
 * Says whether a runtime's tests run. A missing binary skips them on a developer's machine, but
 * under `CI=true` nothing may skip: `failure` is then the message `beforeAll` throws.
 */
export function runtimeAvailability(
  runtime: string,
  located: LocatedBinary,
): { skip: boolean; failure?: string } {
  if (located.missing === undefined) return { skip: false };
  const message = `${runtime} tests cannot run: ${located.missing}. Run \`npx -y pnpm@10 install\` at the repository root.`;
  if (process.env.CI === 'true') return { skip: false, failure: message };
  console.warn(`skipping: ${message}`);
  return { skip: true };
}

/** A server process of another runtime, listening on 127.0.0.1. */
export interface RuntimeServer {
  baseUrl: string;
  pid: number;
  /** Ends the process (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  close(): Promise<void>;
}

/** The line a server script prints once it listens. */
const LISTENING = /^\{"listening":(\d+)\}$/m;

/**
 * Spawns `command args` in `test/`, waits until it prints `{"listening":<port>}` on stdout, and
 * returns its base URL. The child's stdin is a pipe it watches: if this process dies without
 * calling `close()`, the child sees end of input and exits on its own.
 */
export async function startRuntimeServer(
  label: string,
  command: string,
  args: readonly string[],
  { env = {}, timeoutMs = 90_000 }: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RuntimeServer> {
  const child = spawn(command, args, {
    cwd: TEST_PACKAGE_DIR,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let output = '';
  const keep = (chunk: string): void => {
    output = `${output}${chunk}`.slice(-8000);
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', keep);

  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  };

  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${label} did not listen within ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      child.stdout.on('data', (chunk: string) => {
        keep(chunk);
        const match = LISTENING.exec(output);
        if (match?.[1] === undefined) return;
        clearTimeout(timer);
        resolve(Number(match[1]));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`${label} could not be started (${command}): ${error.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(`${label} exited (${String(code ?? signal)}) before listening:\n${output}`),
        );
      });
    });
    return { baseUrl: `http://127.0.0.1:${port}`, pid: child.pid ?? -1, close };
  } catch (error) {
    await close();
    throw error;
  }
}
