/**
 * SIGTERM to each example server while it has a backlog: more accepted alerts than processing
 * slots, so that some are still queued (not yet started) when the signal comes. Every one of them
 * must be processed before the process exits 0.
 *
 * The examples' own tests (examples/express/test/server.test.ts, examples/fastify/test/server.test.ts)
 * cover one alert in flight; this one adds the queued backlog behind the busy slots.
 */
import { createTestDelivery } from '@churn-risk/core/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SECRET = 'whsec_load_shutdown_3c9e';
/** More than the examples' receiver concurrency (the default, 10): 10 run, 15 wait in the queue. */
const ALERTS = 25;
const CONCURRENCY = 10;

interface Lines {
  lines: string[];
  /** Resolves once `count` lines match (rejects if the process exits first). */
  waitForCount(match: RegExp, count: number): Promise<void>;
}

function collectLines(child: ChildProcess): Lines {
  const lines: string[] = [];
  const waiters: {
    match: RegExp;
    count: number;
    resolve: () => void;
    reject: (e: Error) => void;
  }[] = [];
  const check = (): void => {
    for (const waiter of [...waiters]) {
      if (lines.filter((line) => waiter.match.test(line)).length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  let pending = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
    check();
  });
  child.once('exit', () => {
    for (const waiter of waiters.splice(0)) {
      waiter.reject(
        new Error(`exited before ${waiter.count} × ${String(waiter.match)}:\n${lines.join('\n')}`),
      );
    }
  });
  return {
    lines,
    waitForCount: (match, count) =>
      new Promise((resolve, reject) => {
        waiters.push({ match, count, resolve, reject });
        check();
      }),
  };
}

const root = fileURLToPath(new URL('../..', import.meta.url));
let child: ChildProcess | undefined;
let dir: string | undefined;

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('example servers drain a queued backlog on SIGTERM', () => {
  for (const example of ['express', 'fastify']) {
    it(
      `${example}: ${ALERTS} accepted alerts, ${CONCURRENCY} running and the rest queued, all processed before exit 0`,
      { timeout: 60_000 },
      async () => {
        dir = mkdtempSync(join(tmpdir(), `churn-risk-load-${example}-`));
        const logFile = join(dir, 'alerts.log');
        const started = spawn(
          process.execPath,
          ['--conditions=@churn-risk/source', '--import', 'tsx', 'src/server.ts'],
          {
            cwd: join(root, 'examples', example),
            env: {
              ...process.env,
              HOST: '127.0.0.1',
              PORT: '0',
              CHURN_RISK_WEBHOOK_SECRET: SECRET,
              ALERT_LOG_FILE: logFile,
              ALERT_WORK_MS: '1000',
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        child = started;
        const exited = new Promise<number | null>((resolve) => started.once('exit', resolve));
        const out = collectLines(started);
        await out.waitForCount(/^listening on /, 1);
        const url = (out.lines.find((line) => line.startsWith('listening on ')) ?? '').slice(
          'listening on '.length,
        );

        const users = Array.from({ length: ALERTS }, (_, i) => `backlog_${i}`);
        const statuses = await Promise.all(
          users.map(async (userId) => {
            const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
            const response = await fetch(`${url}/webhooks/churn-risk`, {
              method: 'POST',
              headers,
              body,
            });
            await response.arrayBuffer();
            return response.status;
          }),
        );
        expect(statuses).toEqual(new Array<number>(ALERTS).fill(202));
        // Every slot is busy: the other alerts are queued, not started, when the signal comes.
        await out.waitForCount(/^processing backlog_/, CONCURRENCY);
        started.kill('SIGTERM');
        expect(await exited).toBe(0);

        // All alerts were processed, each once, before "drained" and the exit.
        const processed = readFileSync(logFile, 'utf8').trim().split('\n').sort();
        expect(processed).toEqual(users.map((user) => `processed ${user}`).sort());
        const signalAt = out.lines.indexOf('SIGTERM: shutting down');
        const drainedAt = out.lines.indexOf('drained');
        expect(signalAt).toBeGreaterThan(-1);
        expect(drainedAt).toBeGreaterThan(signalAt);
        const processedAt = out.lines.flatMap((line, index) =>
          line.startsWith('processed ') ? [index] : [],
        );
        expect(processedAt).toHaveLength(ALERTS);
        // Some work was still waiting when SIGTERM came, and all of it finished before "drained".
        expect(processedAt.filter((index) => index > signalAt).length).toBeGreaterThan(0);
        expect(Math.max(...processedAt)).toBeLessThan(drainedAt);
        const startedAfterSignal = out.lines
          .slice(signalAt)
          .filter((line) => line.startsWith('processing ')).length;
        expect(startedAfterSignal).toBeGreaterThan(0);
      },
    );
  }
});
