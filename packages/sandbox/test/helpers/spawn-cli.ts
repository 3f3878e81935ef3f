import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The real `churn-risk` command, spawned from source (a second or two each, for tsx).

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a spawned CLI: this process's, without any `CHURN_RISK_*` variable of the
 * shell running the tests, plus `env`.
 */
function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('CHURN_RISK_'));
  return { ...Object.fromEntries(inherited), ...env };
}

/**
 * Runs the CLI from source with `env` added to its environment; `onStdout` may stop it (it gets
 * the child) once some output appeared.
 */
export function runCli(
  args: string[],
  onStdout?: (text: string, stop: () => void) => void,
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@churn-risk/source', '--import', 'tsx', CLI, ...args],
      {
        cwd: ROOT,
        env: cliEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onStdout?.(stdout, () => child.kill('SIGINT'));
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}
