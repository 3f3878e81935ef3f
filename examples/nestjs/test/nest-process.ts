import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTs, type NodeProcess } from '../../../test/support/node-process.js';

const exampleDir = fileURLToPath(new URL('..', import.meta.url));

/** The example app spawned as `npm start` runs it, and where it listens. */
export interface NestProcess extends NodeProcess {
  /** The base URL from its line `listening on <url>`. */
  url: string;
  /** The file its alert log appends `processed <userId>` lines to. */
  logFile: string;
  /** Kills it if still running (SIGKILL) and removes its temporary folder. */
  cleanup(): void;
}

/**
 * Starts `src/main.ts` the way the `start` script does (`node --conditions=@churn-risk/source
 * --import tsx`, from the example's folder, so tsx reads its tsconfig) on a free port of 127.0.0.1,
 * and resolves once it printed its URL.
 */
export async function startNestExample(options: {
  secret: string;
  workMs?: number;
}): Promise<NestProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'churn-risk-nestjs-'));
  const logFile = join(dir, 'alerts.log');
  const spawned = spawnTs(
    'src/main.ts',
    {
      HOST: '127.0.0.1',
      PORT: '0',
      CHURN_RISK_WEBHOOK_SECRET: options.secret,
      ALERT_LOG_FILE: logFile,
      ALERT_WORK_MS: String(options.workMs ?? 0),
    },
    exampleDir,
  );
  const cleanup = (): void => {
    spawned.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await spawned.waitForLines(/^listening on /);
  } catch (error) {
    cleanup();
    throw error;
  }
  const line = spawned.lines.find((candidate) => candidate.startsWith('listening on ')) ?? '';
  return { ...spawned, url: line.slice('listening on '.length), logFile, cleanup };
}
