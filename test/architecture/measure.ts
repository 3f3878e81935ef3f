/**
 * Measures the walk of one delivery: spawns walk-child.ts in a Node process of its own (the
 * `@churn-risk/source` condition, so the packages' TypeScript sources run; for `cloudflare` also
 * the `workerd` condition, so that core resolves the modules a worker bundle holds) and reads its
 * `WALK` line. The servers (redis-server, PostgreSQL) are the caller's: their URLs go in `env`.
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The receivers measured (scenarios.ts). */
export const MODES = ['memory', 'redis', 'postgres', 'cloudflare'] as const;
export type Mode = (typeof MODES)[number];
/** The handler resolves, or rejects on its first try. */
export const VARIANTS = ['succeeds', 'fails'] as const;
export type Variant = (typeof VARIANTS)[number];

/** One measured walk. */
export interface Walk {
  mode: Mode;
  variant: Variant;
  /** The delivery's answer. */
  status: number;
  /** The handler's runs in the window. */
  handlerRuns: number;
  /** Files of `packages/<name>/src/` where code ran for the delivery, from the repository root. */
  ran: string[];
  /** Files of `packages/<name>/src/` loaded in the process (ran or not). */
  loaded: string[];
}

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = fileURLToPath(new URL('./walk-child.ts', import.meta.url));

/** The Node conditions of a mode's child process. */
function conditionsOf(mode: Mode): string[] {
  const conditions = ['--conditions=@churn-risk/source'];
  if (mode === 'cloudflare') conditions.push('--conditions=workerd');
  return conditions;
}

/** Runs one measurement; rejects with the child's output when it fails. */
export function measureWalk(
  mode: Mode,
  variant: Variant,
  env: Record<string, string> = {},
): Promise<Walk> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [...conditionsOf(mode), '--import', 'tsx', CHILD, mode, variant],
      { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((entry) => entry.startsWith('WALK '));
      if (code !== 0 || line === undefined) {
        reject(
          new Error(
            `the ${mode}/${variant} walk failed (exit ${String(code ?? signal)}):\n${stdout}\n${stderr}`,
          ),
        );
        return;
      }
      resolvePromise(JSON.parse(line.slice('WALK '.length)) as Walk);
    });
  });
}
