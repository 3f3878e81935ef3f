/**
 * The failed-set command line shared by the durable back ends' bins (`churn-risk-redis`,
 * `churn-risk-postgres`, a store of your own): `<bin> failed list|retry [ID|--all] --<flag> <url>`.
 * A back end says how to open its queue from a URL and how to name the place without secrets;
 * parsing, the header row, the connect time-out, exit codes and terminal-safe output are here.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ChurnRiskError } from '../errors/churn-risk-error.js';
import { closest } from '../options/known-options.js';
import type { AlertRecord, QueueHealth } from '../queue-port/alert-queue.js';

/** Where the CLI writes (the process's stdout and stderr, or a test's buffers). */
export interface CliIo {
  /** Writes to standard output (results: the table, JSON lines, "Retrying ..."). */
  out(text: string): void;
  /** Writes to standard error (usage errors, an unreachable store, no such alert). */
  err(text: string): void;
}

/** Exit codes: 0 done, 1 failed (the store unreachable, no such alert), 2 bad usage. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2 });

/** How long the CLI waits for the store before it gives up (it exits within 10 s). */
export const CONNECT_TIMEOUT_MS = 5000;

/** What the CLI needs of a durable queue: its failed set, its reachability, and `close`. */
export interface FailedSetQueue {
  /** Failed alerts, newest first. */
  failed(options: { limit: number; offset: number }): Promise<AlertRecord<'failed'>[]>;
  /** Puts one failed alert back; rejects with a `TypeError` when there is no such failed alert. */
  retry(id: string): Promise<void>;
  /** Puts back every alert failed now (a snapshot); resolves with how many. */
  retryAll(): Promise<number>;
  /** Whether the store answers (asked first, within the connect time-out). */
  health(): Promise<QueueHealth>;
  /** Closes what the queue opened. */
  close(): Promise<void>;
}

/** A back end of the failed-set CLI. */
export interface FailedCliBackend {
  /** The bin's name, e.g. `churn-risk-redis`: the prefix of every message. */
  bin: string;
  /** The store, as messages name it: `Redis`, `Postgres`. */
  store: string;
  /** The URL flag, without dashes (`redis`, `database`), and the variable it defaults to. */
  urlFlag: string;
  urlEnv: string;
  /** Accepted URL schemes, e.g. `['redis', 'rediss']`. */
  schemes: readonly string[];
  /** A second, optional flag that scopes the queue (`prefix`, `schema`), with its help line. */
  scope: { flag: string; help: string };
  /** One sentence for the help: where the failed alerts are kept. */
  keptBy: string;
  /** How messages name the place at `url`: never with its password. */
  describe(url: string): string;
  /**
   * Opens the queue at `url` (scoped by the scope flag's value when given), waiting at most
   * `timeoutMs` for a connection. A throw is a usage error (e.g. a bad option). `dispose` frees
   * what was made besides the queue (a connection the queue does not own), after `close`.
   */
  open(
    url: string,
    scope: string | undefined,
    timeoutMs: number,
  ): {
    /** The queue whose failed set the command reads. */
    queue: FailedSetQueue;
    /** Frees what `open` made besides the queue, after `close`. */
    dispose?: () => void;
  };
}

/** Thrown for bad usage; its message is shown with a pointer to `--help`. */
class UsageError extends ChurnRiskError {
  override readonly name = 'UsageError';
  override readonly code = 'WRONG_USAGE' as const;
}

/** Control characters and other escapes of stored text, made visible (a terminal is not hijacked). */
export function printable(text: string): string {
  let out = '';
  for (const c of text) {
    const code = c.charCodeAt(0);
    const control =
      code < 0x20 || (code >= 0x7f && code <= 0x9f) || c === '\u2028' || c === '\u2029';
    out += !control ? c : c === '\n' ? '\\n' : `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/** The URL with its password, if any, replaced by `***`: how messages may name it. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(an unparsable URL)';
  }
}

/** `text` without the URL's password, in case a driver's message quoted it. */
export function hidePassword(text: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return text;
  }
  return password === '' ? text : text.split(password).join('***');
}

/** The help text of a back end's bin. */
export function failedCliHelp(backend: FailedCliBackend): string {
  const { bin, urlFlag, urlEnv, store, scope } = backend;
  const flag = `--${urlFlag} <url>`;
  const scopeFlag = `--${scope.flag} <${scope.flag}>`;
  return `Usage: ${bin} failed list [--limit N] [--offset N] [--json] ${flag}
       ${bin} failed retry <ID> | --all ${flag}

Alerts whose handlers failed after all their tries (or whose worker died mid-alert more than
maxStalls times), ${backend.keptBy}. "list" prints them newest first, under a header row;
"retry" puts one (by the job id that "list" prints, or the alert identity userId:triggeredAt) or
all of them back to be processed by the worker processes, with their tries counted afresh. Exits
1 when ${store} cannot be reached within ${CONNECT_TIMEOUT_MS / 1000} s or there is no such
failed alert, 2 on a usage error.

Options:
  ${flag.padEnd(18)} The ${backend.schemes[0] ?? ''}:// URL (default: the ${urlEnv} environment variable)
  ${scopeFlag.padEnd(18)} ${scope.help}
  --limit <n>        list: at most n alerts (default 50)
  --offset <n>       list: skip n alerts (default 0)
  --json             list: one JSON object per line, no header
  --all              retry: every alert failed now
  -h, --help         Show this help
`;
}

function count(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${value}".`);
  }
  return Number(value);
}

const COLUMNS = ['ID', 'ALERT', 'TRIES', 'FAILED AT', 'ERROR'] as const;

function table(alerts: readonly AlertRecord<'failed'>[]): string {
  const rows = alerts.map((alert) => [
    alert.jobId,
    printable(alert.id),
    String(alert.tries),
    alert.failedAt === undefined ? '-' : new Date(alert.failedAt).toISOString(),
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
  scope: string | undefined;
  limit: number;
  offset: number;
}

/** The flags of a back end's bin, as `parseArgs` takes them. */
function flagsOf(backend: FailedCliBackend) {
  return {
    [backend.urlFlag]: { type: 'string' },
    [backend.scope.flag]: { type: 'string' },
    limit: { type: 'string' },
    offset: { type: 'string' },
    json: { type: 'boolean' },
    all: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  } as const satisfies ParseArgsConfig['options'];
}

/**
 * Refuses the first flag the bin does not know, naming the known flag closest to it (by edit
 * distance), before `parseArgs`' own text (which is about positionals) is met.
 */
function refuseUnknownFlags(options: ReturnType<typeof flagsOf>, args: readonly string[]): void {
  const { tokens } = parseArgs({
    args: [...args],
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const known = Object.keys(options);
  for (const token of tokens) {
    if (token.kind !== 'option' || Object.hasOwn(options, token.name)) continue;
    const near = closest(token.name, known);
    throw new UsageError(
      `unknown option ${printable(token.rawName)}` +
        (near === undefined ? '.' : `; did you mean --${near}?`),
    );
  }
}

function parse(backend: FailedCliBackend, args: readonly string[]): Command | 'help' {
  const options = flagsOf(backend);
  refuseUnknownFlags(options, args);
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, strict: true, options });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const flag = (name: string): string | boolean | undefined =>
    (values as Record<string, string | boolean | undefined>)[name];
  const text = (name: string): string | undefined => {
    const value = flag(name);
    return typeof value === 'string' ? value : undefined;
  };
  if (flag('help') === true) return 'help';
  const [command, action, id, ...extra] = positionals;
  if (command !== 'failed') throw new UsageError('the command must be "failed list|retry".');
  if (action !== 'list' && action !== 'retry') {
    throw new UsageError(`the action must be "list" or "retry", got "${printable(action ?? '')}".`);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${printable(extra[0] ?? '')}".`);
  const { urlFlag, urlEnv, schemes } = backend;
  const given = text(urlFlag);
  const url = given ?? process.env[urlEnv];
  if (url === undefined || url === '') {
    throw new UsageError(`--${urlFlag} <url> is required (or set $${urlEnv}).`);
  }
  if (!schemes.some((scheme) => url.startsWith(`${scheme}://`))) {
    const source = given === undefined ? `$${urlEnv}` : `--${urlFlag}`;
    throw new UsageError(`${source} must be a ${schemes[0] ?? ''}:// URL.`);
  }
  const all = flag('all') === true;
  if (action === 'list' && (id !== undefined || all)) {
    throw new UsageError('"list" takes no id and no --all.');
  }
  if (action === 'retry' && (id === undefined) === !all) {
    throw new UsageError('"retry" takes one id or --all.');
  }
  return {
    action,
    id,
    all,
    json: flag('json') === true,
    url,
    scope: text(backend.scope.flag),
    limit: count('limit', text('limit'), 50, 1),
    offset: count('offset', text('offset'), 0, 0),
  };
}

async function execute(
  bin: string,
  command: Command,
  queue: FailedSetQueue,
  io: CliIo,
): Promise<number> {
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
    io.err(`${bin}: no failed alert "${printable(id)}".\n`);
    return EXIT.failed;
  }
  io.out(`Retrying ${printable(id)}.\n`);
  return EXIT.ok;
}

/** Closes the queue, waiting at most 1 s (an unreachable store must not hold the exit). */
async function closeSoon(queue: FailedSetQueue): Promise<void> {
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
 * Runs `<bin> failed list|retry [ID|--all] --<urlFlag> <url>` and resolves with the exit code.
 * The store is asked first whether it answers, within `CONNECT_TIMEOUT_MS`; if not, one line
 * naming the host (never the user or password) goes to `io.err` and the code is 1.
 */
export async function runFailedCli(
  backend: FailedCliBackend,
  args: readonly string[],
  io: CliIo,
): Promise<number> {
  const { bin } = backend;
  let command: Command | 'help';
  try {
    command = parse(backend, args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`${bin}: ${error.message}\nRun "${bin} --help" for usage.\n`);
    return EXIT.usage;
  }
  if (command === 'help') {
    io.out(failedCliHelp(backend));
    return EXIT.ok;
  }
  const { url } = command;
  const safe = (text: string): string => printable(hidePassword(text, url));
  const where = `${backend.store} at ${backend.describe(url)}`;
  let queue: FailedSetQueue;
  let dispose: (() => void) | undefined;
  try {
    ({ queue, dispose } = backend.open(url, command.scope, CONNECT_TIMEOUT_MS));
  } catch (error) {
    io.err(`${bin}: ${safe(error instanceof Error ? error.message : String(error))}\n`);
    return EXIT.usage;
  }
  try {
    const health = await queue.health();
    if (!health.reachable) {
      io.err(
        `${bin}: cannot reach ${where} within ${CONNECT_TIMEOUT_MS / 1000} s ` +
          `(${safe(health.error ?? 'no answer')}).\n`,
      );
      return EXIT.failed;
    }
    return await execute(bin, command, queue, io);
  } catch (error) {
    io.err(`${bin}: ${safe(error instanceof Error ? error.message : String(error))} (${where}).\n`);
    return EXIT.failed;
  } finally {
    await closeSoon(queue);
    dispose?.();
  }
}

/**
 * A bin's whole body: runs the CLI on `process.argv`, then exits with its code once stdout is
 * flushed (a connection to an unreachable store may still be retrying in the background).
 */
export async function runFailedCliBin(backend: FailedCliBackend): Promise<never> {
  const code = await runFailedCli(backend, process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
  process.exitCode = code;
  return new Promise<never>(() => {
    process.stdout.write('', () => process.exit(code));
  });
}
