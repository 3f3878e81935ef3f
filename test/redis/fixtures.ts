import { createTestDelivery } from '@churn-risk/core/testing';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The secret of every receiver in the Redis tests. */
export const SECRET = 'whsec_redis_e2e_77a1';
/** The child process scripts. */
export const WORKER_SCRIPT = fileURLToPath(
  new URL('../support/redis/worker-process.ts', import.meta.url),
);
export const WEB_SCRIPT = fileURLToPath(
  new URL('../support/redis/web-process.ts', import.meta.url),
);

let sequence = 0;

/** A valid alert with a fresh identity, and that identity. */
export function freshAlert(tag: string): { alert: Record<string, unknown>; id: string } {
  sequence += 1;
  const userId = `${tag}_${process.pid}_${sequence}`;
  const triggeredAt = new Date(Date.UTC(2026, 10, 2) + sequence * 1000).toISOString();
  const alert = {
    event: 'churn_risk_alert',
    userId,
    score: 0.9,
    tier: 'high',
    signals: ['payment_failed'],
    recommendation: 'Call them.',
    triggeredAt,
  };
  return { alert, id: `${userId}:${triggeredAt}` };
}

/** A signed delivery of `alert` for `receiver.handle`. */
export function deliveryOf(alert: Record<string, unknown>): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery(alert, { secret: SECRET });
  return { method: 'POST', headers, body };
}

/** A temporary folder and a log file in it. */
export function tempLog(name: string): { dir: string; file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `churn-risk-${name}-`));
  return {
    dir,
    file: join(dir, 'handled.log'),
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The complete, non-empty lines a worker wrote to `file` (none while it does not exist yet). */
export function logLines(file: string): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => line !== '');
}

/** The `start`/`done` lines of a worker log: `[kind, alertId, pid]`. */
export function readLog(file: string): [string, string, string][] {
  return logLines(file).map((line) => {
    const kind = line.slice(0, line.indexOf(' '));
    const rest = line.slice(line.indexOf(' ') + 1);
    const pidAt = rest.lastIndexOf(' ');
    return [kind, rest.slice(0, pidAt), rest.slice(pidAt + 1)];
  });
}

/** Resolves once `check()` is true (every 50 ms), or rejects after `ms`. */
export async function eventually(check: () => boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
