import { createTestDelivery } from '@churn-risk/core/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SECRET = 'whsec_example_fastify_server';
const root = fileURLToPath(new URL('..', import.meta.url));

/** The server's stdout, line by line, with a way to wait for a line. */
function watchLines(child: ChildProcess): {
  lines: string[];
  waitFor: (match: RegExp) => Promise<string>;
} {
  const lines: string[] = [];
  const waiters: { match: RegExp; resolve: (line: string) => void }[] = [];
  let pending = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.match.test(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  return {
    lines,
    waitFor: (match) =>
      new Promise((resolve, reject) => {
        const seen = lines.find((line) => match.test(line));
        if (seen !== undefined) resolve(seen);
        else waiters.push({ match, resolve });
        child.once('exit', () =>
          reject(new Error(`exited before ${String(match)}: ${lines.join('\n')}`)),
        );
      }),
  };
}

describe('fastify example server (spawned)', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;

  afterEach(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('finishes an in-flight alert after SIGTERM, then exits 0', async () => {
    dir = mkdtempSync(join(tmpdir(), 'churn-risk-fastify-'));
    const logFile = join(dir, 'alerts.log');
    child = spawn(
      process.execPath,
      ['--conditions=@churn-risk/source', '--import', 'tsx', 'src/server.ts'],
      {
        cwd: root,
        env: {
          ...process.env,
          PORT: '0',
          CHURN_RISK_WEBHOOK_SECRET: SECRET,
          ALERT_LOG_FILE: logFile,
          ALERT_WORK_MS: '1500',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child?.once('exit', resolve));
    const out = watchLines(child);
    const first = await out.waitFor(/^listening on /);
    expect(out.lines[0]).toBe(first);
    const url = first.replace('listening on ', '');

    const { headers, body, alert } = createTestDelivery(
      { userId: 'slow_user' },
      { secret: SECRET },
    );
    const response = await fetch(`${url}/webhooks/churn-risk`, { method: 'POST', headers, body });
    expect(response.status).toBe(202);
    await out.waitFor(/^processing slow_user$/);
    child.kill('SIGTERM');

    expect(await exited).toBe(0);
    expect(readFileSync(logFile, 'utf8')).toBe(`processed ${alert.userId}\n`);
    // The signal came while the handler was still working; the exit waited for it.
    const order = [
      'processing slow_user',
      'SIGTERM: shutting down',
      'processed slow_user',
      'drained',
    ];
    expect(out.lines.filter((line) => order.includes(line))).toEqual(order);
  });
});
