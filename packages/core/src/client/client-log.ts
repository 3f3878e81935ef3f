import {
  isLogThreshold,
  levelEnabled,
  resolveLogger,
  type LogFields,
  type Logger,
  type LogLevel,
  type LogThreshold,
} from '../observability/logger.js';
import { readEnvVar } from './env.js';
import { validationError } from './validate-input.js';

/** The environment variable that sets the client's `logLevel` when the option is not given. */
export const CLIENT_LOG_ENV = 'CHURN_RISK_LOG';

/**
 * One attempt, as logged. Only these fields are ever written: never the API key, a header, a
 * query string or a body.
 */
export interface AttemptRecord {
  method: string;
  /** The path without its query string. */
  path: string;
  /** The HTTP status, or `undefined` when no response came (see `code`). */
  status: number | undefined;
  /** The error code of a failed attempt (`NETWORK_ERROR`, `TIMEOUT`, `SERVER_ERROR`...). */
  code: string | undefined;
  ms: number;
  /** 0 for the first attempt. */
  attempt: number;
  requestId: string | undefined;
}

function field(name: string, value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? ` ${name}=${value}` : '';
}

/** Fields every message already says. */
const IN_MESSAGE = new Set(['method', 'path', 'status', 'code', 'ms']);

/** One `[churn-risk] ...` line to the console method of the level. */
function consoleLine(level: LogLevel): (fields: LogFields, message: string) => void {
  return (fields, message) => {
    const extra = Object.entries(fields)
      .map(([name, value]) => (IN_MESSAGE.has(name) ? '' : field(name, value)))
      .join('');
    console[level](`[churn-risk] ${message}${extra}`);
  };
}

/** The default output: one plain line per record on the console. */
const CONSOLE_LINES: Logger = Object.freeze({
  debug: consoleLine('debug'),
  info: consoleLine('info'),
  warn: consoleLine('warn'),
  error: consoleLine('error'),
});

function readEnv(): string | undefined {
  return readEnvVar(CLIENT_LOG_ENV)?.trim().toLowerCase();
}

/**
 * The client's log: records at or above `threshold` go to `logger`. `undefined` when logging is
 * off, so that a call then costs nothing.
 */
export class ClientLog {
  readonly #logger: Logger;
  readonly #threshold: LogThreshold;

  constructor(logger: Logger, threshold: LogThreshold) {
    this.#logger = logger;
    this.#threshold = threshold;
  }

  /** `debug`: one line per attempt. */
  attempt(record: AttemptRecord): void {
    if (!levelEnabled('debug', this.#threshold)) return;
    const { method, path, status, code, ms, attempt, requestId } = record;
    const outcome = status === undefined ? (code ?? 'no response') : String(status);
    this.#logger.debug(
      { method, path, status, code, ms, attempt, requestId },
      `${method} ${path} ${outcome} ${ms}ms`,
    );
  }

  /** `warn`: a failed attempt that will be retried after `delayMs`. */
  retry(record: AttemptRecord, delayMs: number): void {
    if (!levelEnabled('warn', this.#threshold)) return;
    const { method, path, status, code, attempt, requestId } = record;
    this.#logger.warn(
      { method, path, status, code, attempt, requestId, delayMs: Math.round(delayMs) },
      `${method} ${path} failed (${code ?? String(status)}), retrying`,
    );
  }

  /** `info`: a call that succeeded, after `attempts` attempts in `ms` in all. */
  succeeded(method: string, path: string, status: number, ms: number, attempts: number): void {
    if (!levelEnabled('info', this.#threshold)) return;
    this.#logger.info(
      { method, path, status, ms, attempts },
      `${method} ${path} ${status} ${ms}ms`,
    );
  }

  /** `error`: a call that failed for good (what the returned promise rejects with). */
  failed(record: AttemptRecord): void {
    if (!levelEnabled('error', this.#threshold)) return;
    const { method, path, status, code, attempt, requestId } = record;
    this.#logger.error(
      { method, path, status, code, attempts: attempt + 1, requestId },
      `${method} ${path} failed (${code ?? String(status)})`,
    );
  }
}

/**
 * Resolves `logLevel` (else `CHURN_RISK_LOG`, else `'off'`) and `logger` (else one line per record
 * on the console). A bad `logLevel` or `logger` option is a `VALIDATION_ERROR`; a bad environment
 * value turns logging off with one warning.
 */
export function resolveClientLog(logLevel: unknown, logger: unknown): ClientLog | undefined {
  let threshold: LogThreshold;
  if (logLevel !== undefined) {
    if (!isLogThreshold(logLevel)) {
      throw validationError(`logLevel must be one of 'off', 'debug', 'info', 'warn', 'error'`);
    }
    threshold = logLevel;
  } else {
    const fromEnv = readEnv();
    if (fromEnv !== undefined && !isLogThreshold(fromEnv)) {
      console.warn(
        `[churn-risk] ${CLIENT_LOG_ENV} must be off, debug, info, warn or error; logging is off.`,
      );
    }
    threshold = fromEnv !== undefined && isLogThreshold(fromEnv) ? fromEnv : 'off';
  }
  if (threshold === 'off') return undefined;
  let resolved: Logger;
  try {
    resolved = resolveLogger(logger, CONSOLE_LINES);
  } catch (error) {
    throw validationError((error as Error).message);
  }
  return new ClientLog(resolved, threshold);
}
