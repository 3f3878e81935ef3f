import { parseArgs } from 'node:util';
import { describeConnection } from '../connection.js';
import { createPostgresQueue, type PostgresQueue } from '../postgres-queue.js';
import type { FailedAlert } from '@churn-risk/core';

/** Where the CLI writes (the process's stdout and stderr, or a test's buffers). */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** Exit codes: 0 done, 1 failed (the database unreachable, no such alert), 2 bad usage. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2 });

/** How long the CLI waits for the database before it gives up (it exits within 10 s, SPEC 15). */
export const CONNECT_TIMEOUT_MS = 5000;

export const HELP = `Usage: churn-risk-postgres failed list [--limit N] [--offset N] [--json] --database <url>
       churn-risk-postgres failed retry <ID> | --all --database <url>

Alerts whose handlers failed after all their tries (or whose worker died mid-alert more than
maxStalls times), kept in Postgres by @churn-risk/postgres (createPostgresQueue). "list" prints
them newest first, under a header row; "retry" puts one (by the job id that "list" prints, or the
alert identity userId:triggeredAt) or all of them back to be processed by the worker processes,
with their tries counted afresh. Exits 1 when the database cannot be reached within 5 s or there
is no such failed alert, 2 on a usage error.

Options:
  --database <url>   The postgres:// URL (default: the DATABASE_URL environment variable)
  --schema <name>    The queue's schema (default churn_risk)
  --limit <n>        list: at most n alerts (default 50)
  --offset <n>       list: skip n alerts (default 0)
  --json             list: one JSON object per line, no header
  --all              retry: every alert failed now
  -h, --help         Show this help
`;

class UsageError extends Error {}

/** Control characters and other escapes of stored text, made visible (a terminal is not hijacked). */
function printable(text: string): string {
  let out = '';
  for (const c of text) {
    const code = c.charCodeAt(0);
    const control =
      code < 0x20 || (code >= 0x7f && code <= 0x9f) || c === '\u2028' || c === '\u2029';
    out += !control ? c : c === '\n' ? '\\n' : `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return out;
}

function count(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${value}".`);
  }
  return Number(value);
}

const COLUMNS = ['ID', 'ALERT', 'TRIES', 'FAILED AT', 'ERROR'] as const;

function table(alerts: readonly FailedAlert[]): string {
  const rows = alerts.map((alert) => [
    alert.id,
    printable(alert.alertId),
    String(alert.tries),
    alert.failedAt?.toISOString() ?? '-',
    printable(alert.error),
  ]);
  const widths = COLUMNS.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ');
  return [line(COLUMNS), ...rows.map(line)].join('\n') + '\n';
}

interface Command {
  action: 'list' | 'retry';
  id: string | undefined;
  all: boolean;
  json: boolean;
  url: string;
  schema: string | undefined;
  limit: number;
  offset: number;
}

function parse(args: readonly string[]): Command | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        database: { type: 'string' },
        schema: { type: 'string' },
        limit: { type: 'string' },
        offset: { type: 'string' },
        json: { type: 'boolean' },
        all: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values: flags, positionals } = parsed;
  if (flags.help === true) return 'help';
  const [command, action, id, ...extra] = positionals;
  if (command !== 'failed') throw new UsageError('the command must be "failed list|retry".');
  if (action !== 'list' && action !== 'retry') {
    throw new UsageError(`the action must be "list" or "retry", got "${printable(action ?? '')}".`);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${printable(extra[0] ?? '')}".`);
  const url = flags.database ?? process.env.DATABASE_URL;
  if (url === undefined || url === '') throw new UsageError('--database <url> is required.');
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError('--database must be a postgres:// URL.');
  }
  if (action === 'list' && (id !== undefined || flags.all === true)) {
    throw new UsageError('"list" takes no id and no --all.');
  }
  if (action === 'retry' && (id === undefined) === (flags.all !== true)) {
    throw new UsageError('"retry" takes one id or --all.');
  }
  return {
    action,
    id,
    all: flags.all === true,
    json: flags.json === true,
    url,
    schema: flags.schema,
    limit: count('limit', flags.limit, 50, 1),
    offset: count('offset', flags.offset, 0, 0),
  };
}

async function execute(command: Command, queue: PostgresQueue, io: CliIo): Promise<number> {
  if (command.action === 'list') {
    const failed = await queue.failed({ limit: command.limit, offset: command.offset });
    if (command.json) for (const alert of failed) io.out(`${JSON.stringify(alert)}\n`);
    else if (failed.length === 0) io.out('No failed alerts.\n');
    else io.out(table(failed));
    return EXIT.ok;
  }
  if (command.all) {
    io.out(`Retrying ${await queue.retryAll()} failed alert(s).\n`);
    return EXIT.ok;
  }
  const id = command.id as string;
  try {
    await queue.retry(id);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    io.err(`churn-risk-postgres: no failed alert "${printable(id)}".\n`);
    return EXIT.failed;
  }
  io.out(`Retrying ${printable(id)}.\n`);
  return EXIT.ok;
}

/** Closes the queue, waiting at most 1 s (an unreachable database must not hold the exit). */
async function closeSoon(queue: PostgresQueue): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    queue.close().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 1000);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * `churn-risk-postgres failed list|retry [ID|--all] --database <url>`: resolves with the exit
 * code. The database is asked first whether it answers, within `CONNECT_TIMEOUT_MS`; if not, one
 * line naming the host (never the user's password) goes to `io.err` and the code is 1.
 */
export async function runFailedCli(args: readonly string[], io: CliIo): Promise<number> {
  let command: Command | 'help';
  try {
    command = parse(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`churn-risk-postgres: ${error.message}\nRun "churn-risk-postgres --help" for usage.\n`);
    return EXIT.usage;
  }
  if (command === 'help') {
    io.out(HELP);
    return EXIT.ok;
  }
  const where = `Postgres at ${describeConnection(command.url)}`;
  let queue: PostgresQueue;
  try {
    queue = createPostgresQueue({
      connection: {
        connectionString: command.url,
        max: 2,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      },
      ...(command.schema === undefined ? {} : { schema: command.schema }),
      enqueueTimeoutMs: CONNECT_TIMEOUT_MS,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.err(`churn-risk-postgres: ${printable(message)}\n`);
    return EXIT.usage;
  }
  try {
    const health = await queue.health();
    if (!health.reachable) {
      io.err(
        `churn-risk-postgres: cannot reach ${where} within ${CONNECT_TIMEOUT_MS / 1000} s ` +
          `(${printable(hidePassword(health.error ?? 'no answer', command.url))}).\n`,
      );
      return EXIT.failed;
    }
    return await execute(command, queue, io);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.err(`churn-risk-postgres: ${printable(hidePassword(message, command.url))} (${where}).\n`);
    return EXIT.failed;
  } finally {
    await closeSoon(queue);
  }
}

/** `text` without the URL's password, in case a driver message quoted it. */
function hidePassword(text: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return text;
  }
  return password === '' ? text : text.split(password).join('***');
}
