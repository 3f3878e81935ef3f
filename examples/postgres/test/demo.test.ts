import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs `pnpm demo:postgres`'s command; resolves with the exit code and the output. */
function runDemo(env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@churn-risk/source', '--import', 'tsx', 'examples/postgres/src/demo.ts'],
    { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      resolve({ code, out });
    });
  });
}

describe('pnpm demo:postgres', () => {
  it('kills the worker mid-alert, restarts it, and handles every delivered alert', async () => {
    const { code, out } = await runDemo();
    expect(code, out).toBe(0);
    expect(out).toMatch(/killed the worker with [1-9]\d* alert\(s\) in its handler/);
    expect(out).toMatch(/^re-runs after the crash: +[1-9]\d* /m);
    expect(out).toMatch(/^alerts delivered \(202\): +200$/m);
    expect(out).toMatch(/^alerts handled: +200$/m);
    expect(out).toMatch(
      /^duplicates: +0 alerts recorded twice; 20 redeliveries answered duplicate$/m,
    );
    expect(out).not.toContain('✗');
    expect(out.trim().split('\n').at(-1)).toBe('every alert was handled');
  }, 120_000);

  it('without PostgreSQL, names the install command and exits non-zero', async () => {
    const { code, out } = await runDemo({ PG_BIN_DIR: '/nonexistent/postgresql/bin' });
    expect(code).not.toBe(0);
    expect(out).toContain('apt-get update && apt-get install -y postgresql');
    expect(out).not.toContain('every alert was handled');
  }, 60_000);
});
