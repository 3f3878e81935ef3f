import type { FailedAlert, RedisQueue } from '@churn-risk/redis';
import { EXIT, UsageError, type CliIo } from './cli-io.js';
import { printable } from './format-deliveries.js';
import { parseCommand } from './parse-flags.js';

export const FAILED_HELP = `Usage: churn-risk failed list [--limit N] [--offset N] [--json] --redis <url>
       churn-risk failed retry <ID> | --all --redis <url>

Alerts whose handlers failed after all their tries, kept in Redis by @churn-risk/redis
(createRedisQueue). "list" prints them newest first; "retry" puts one (by the job id that "list"
prints, or the alert identity userId:triggeredAt) or all of them back to be processed by the
worker processes. Exits 1 when there is no such failed alert.

Options:
  --redis <url>      The Redis URL (default: the REDIS_URL environment variable)
  --prefix <prefix>  The queue's key prefix (default churn-risk)
  --limit <n>        list: at most n alerts (default 50)
  --offset <n>       list: skip n alerts (default 0)
  --json             list: one JSON object per line
  --all              retry: every failed alert
  -h, --help         Show this help
`;

const FLAGS = {
  redis: { type: 'string' },
  prefix: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  json: { type: 'boolean' },
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function count(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${value}".`);
  }
  return Number(value);
}

/** Loads @churn-risk/redis (an optional peer of the sandbox) and opens the queue. */
async function openQueue(url: string, prefix: string | undefined): Promise<RedisQueue> {
  let redis: typeof import('@churn-risk/redis');
  try {
    redis = await import('@churn-risk/redis');
  } catch {
    throw new UsageError('"failed" needs @churn-risk/redis: npm install @churn-risk/redis');
  }
  return redis.createRedisQueue({
    connection: url,
    ...(prefix === undefined ? {} : { prefix }),
    enqueueTimeoutMs: 5000,
  });
}

function line(alert: FailedAlert): string {
  const failedAt = alert.failedAt?.toISOString() ?? '-';
  return `${alert.id}  ${printable(alert.alertId)}  tries ${alert.tries}  failed ${failedAt}  ${printable(alert.error)}\n`;
}

/** `churn-risk failed list|retry`: resolves with the exit code. */
export async function failedCommand(args: string[], io: CliIo): Promise<number> {
  const { values: flags, positionals } = parseCommand(args, FLAGS, 2);
  if (flags.help === true) {
    io.out(FAILED_HELP);
    return EXIT.ok;
  }
  const [action, id] = positionals;
  if (action !== 'list' && action !== 'retry') {
    throw new UsageError(`the action must be "list" or "retry", got "${printable(action ?? '')}".`);
  }
  const url = flags.redis ?? process.env.REDIS_URL;
  if (url === undefined || url === '') throw new UsageError('--redis <url> is required.');
  if (!/^rediss?:\/\//.test(url)) throw new UsageError('--redis must be a redis:// URL.');
  if (action === 'list' && (id !== undefined || flags.all === true)) {
    throw new UsageError('"list" takes no id and no --all.');
  }
  if (action === 'retry' && (id === undefined) === (flags.all !== true)) {
    throw new UsageError('"retry" takes one id or --all.');
  }
  const limit = count('limit', flags.limit, 50, 1);
  const offset = count('offset', flags.offset, 0, 0);
  const queue = await openQueue(url, flags.prefix);
  try {
    if (action === 'list') {
      const failed = await queue.failed({ limit, offset });
      if (flags.json === true) for (const alert of failed) io.out(`${JSON.stringify(alert)}\n`);
      else if (failed.length === 0) io.out('No failed alerts.\n');
      else for (const alert of failed) io.out(line(alert));
      return EXIT.ok;
    }
    if (flags.all === true) {
      io.out(`Retrying ${await queue.retryAll()} failed alert(s).\n`);
      return EXIT.ok;
    }
    try {
      await queue.retry(id as string);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      io.err(`churn-risk failed: no failed alert "${printable(id as string)}".\n`);
      return EXIT.failed;
    }
    io.out(`Retrying ${printable(id as string)}.\n`);
    return EXIT.ok;
  } finally {
    await queue.close();
  }
}
