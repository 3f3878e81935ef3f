import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url));

/** Options of `describeDurableDemo`. */
export interface DurableDemoTest {
  /** The root package's script: `demo:redis`. */
  command: string;
  /** The demo's entry, relative to the repository root: `examples/redis/src/demo.ts`. */
  script: string;
  /** How to run the demo where its server is not installed, and what it should say then. */
  missing: {
    /** For the test's name: `redis-server`. */
    what: string;
    /** Variables that point the demo at no server: `{ REDIS_SERVER: '/nonexistent/…' }`. */
    env: Record<string, string>;
    /** The install command the demo prints. */
    install: string;
  };
  /** Also expect at least one handler run after the crash. */
  rerunsAfterCrash?: boolean;
  /** Also expect the web process's failed alerts page, read through its JSON API. */
  opsPage?: boolean;
}

/** Runs the demo's command (as `pnpm <command>` does); resolves with the exit code and output. */
function runDemo(
  script: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@churn-risk/source', '--import', 'tsx', script],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
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

/**
 * The tests of a durable demo, run as a child process: it exits 0 with every alert handled once
 * after a worker was killed mid-alert; without its server it names the install command and exits
 * non-zero.
 */
export function describeDurableDemo(options: DurableDemoTest): void {
  describe(`pnpm ${options.command}`, () => {
    it('kills the worker mid-alert, restarts it, and handles every delivered alert', async () => {
      const { code, out } = await runDemo(options.script);
      expect(code, out).toBe(0);
      expect(out).toMatch(/killed the worker with [1-9]\d* alert\(s\) in its handler/);
      expect(out).toMatch(/^alerts delivered \(202\): +200$/m);
      expect(out).toMatch(/^alerts handled: +200$/m);
      if (options.rerunsAfterCrash === true) {
        expect(out).toMatch(/^re-runs after the crash: +[1-9]\d* /m);
      }
      expect(out).toMatch(
        /^duplicates: +0 alerts recorded twice; 20 redeliveries answered duplicate$/m,
      );
      if (options.opsPage === true) {
        expect(out).toMatch(/failed alerts page: http:\/\/127\.0\.0\.1:\d+\/ops$/m);
        expect(out).toMatch(/failed alerts page \(http:[^)]+\/ops\): store reachable, 0 failed$/m);
      }
      expect(out).not.toContain('✗');
      expect(out.trim().split('\n').at(-1)).toBe('every alert was handled');
    }, 120_000);

    it(`without ${options.missing.what}, names the install command and exits non-zero`, async () => {
      const { code, out } = await runDemo(options.script, options.missing.env);
      expect(code).not.toBe(0);
      expect(out).toContain(options.missing.install);
      expect(out).not.toContain('every alert was handled');
    }, 60_000);
  });
}
