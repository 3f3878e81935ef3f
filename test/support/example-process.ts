import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTs } from './node-process.js';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A spawned example server (`examples/<name>/src/server.ts`) and its stdout, line by line. */
export interface ExampleProcess {
  child: ChildProcess;
  /** The base URL from its first line, `listening on <url>`. */
  url: string;
  /** Every complete stdout line so far. */
  lines: string[];
  /** The file its alert log appends `processed <userId>` lines to. */
  logFile: string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Resolves once `count` lines match; rejects if the process exits first. */
  waitForLines(match: RegExp, count?: number): Promise<void>;
  /** Kills it if still running and removes its temporary folder. */
  cleanup(): void;
}

/**
 * Starts `examples/<name>/src/server.ts` from source on a free port, with the given webhook
 * secret and handler work time, and resolves once it printed its URL.
 */
export async function startExample(
  name: string,
  options: { secret: string; workMs: number },
): Promise<ExampleProcess> {
  const dir = mkdtempSync(join(tmpdir(), `churn-risk-${name}-`));
  const logFile = join(dir, 'alerts.log');
  const spawned = spawnTs(
    'src/server.ts',
    {
      HOST: '127.0.0.1',
      PORT: '0',
      CHURN_RISK_WEBHOOK_SECRET: options.secret,
      ALERT_LOG_FILE: logFile,
      ALERT_WORK_MS: String(options.workMs),
    },
    join(repoRoot, 'examples', name),
  );
  const { child, lines, exited, waitForLines } = spawned;
  await waitForLines(/^listening on /);
  return {
    child,
    url: (lines.find((line) => line.startsWith('listening on ')) ?? '').slice(
      'listening on '.length,
    ),
    lines,
    logFile,
    exited,
    waitForLines,
    cleanup() {
      spawned.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
