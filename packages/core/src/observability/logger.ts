/**
 * The logger the receiver and the client write to: pino's shape, so a pino
 * instance, a `console` or any object with the four methods can be passed.
 */

/**
 * Fields of one log record. Never holds a secret, a signature header, an expected signature, an
 * API key or a body.
 */
export type LogFields = Record<string, unknown>;

/** One log method, called as pino calls it: fields first, then the message. */
export type LogMethod = (fields: LogFields, message: string) => void;

/**
 * A pino-style logger. Any object with these four methods works: a pino instance (or a child of
 * one), `console`, or an adapter around another library.
 *
 * @example
 * import pino from 'pino';
 * const receiver = createReceiver({ secret, logger: pino() });
 *
 * @example
 * // console also works: it prints the fields object, then the message
 * const receiver = createReceiver({ secret, logger: console });
 */
export interface Logger {
  /** Called as pino calls it: fields first, then the message. */
  debug(fields: LogFields, message: string): void;
  /** Called as pino calls it: fields first, then the message. */
  info(fields: LogFields, message: string): void;
  /** Called as pino calls it: fields first, then the message. */
  warn(fields: LogFields, message: string): void;
  /** Called as pino calls it: fields first, then the message. */
  error(fields: LogFields, message: string): void;
}

/** The levels, least severe first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A level, or `'off'` for nothing at all. */
export type LogThreshold = LogLevel | 'off';

const RANK: Readonly<Record<LogThreshold, number>> = /* @__PURE__ */ Object.freeze({
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  // `Infinity`, not `Number.POSITIVE_INFINITY`: a bundler keeps a table that reads a property.
  off: Infinity,
});

/** The values `logLevel` and `CHURN_RISK_LOG` accept, least verbose last. */
export const LOG_THRESHOLDS: readonly LogThreshold[] = /* @__PURE__ */ Object.freeze([
  'debug',
  'info',
  'warn',
  'error',
  'off',
]);

/** True for `'off'` and the four levels. */
export function isLogThreshold(value: unknown): value is LogThreshold {
  return typeof value === 'string' && Object.hasOwn(RANK, value);
}

/** True when a record at `level` passes `threshold` (`'warn'` lets `warn` and `error` through). */
export function levelEnabled(level: LogLevel, threshold: LogThreshold): boolean {
  return RANK[level] >= RANK[threshold];
}

const ignore: LogMethod = () => undefined;

/** A logger that drops everything. */
export const SILENT_LOGGER: Logger = Object.freeze({
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});

/**
 * The receiver's default: errors to `console.error` (one `[churn-risk]` line and the fields),
 * nothing else. The console is looked up at each call, so a test's spy on it sees the line.
 */
export const DEFAULT_RECEIVER_LOGGER: Logger = Object.freeze({
  ...SILENT_LOGGER,
  error(fields: LogFields, message: string) {
    console.error(`[churn-risk] ${message}`, fields);
  },
});

/**
 * Writes `message` at `warn`. With the default logger, which prints only errors, it goes to
 * `console.warn` all the same: for what an operator must see without configuring a logger (a
 * lease lost, an alert taken over, an alert failed as poison).
 */
export function warnAlways(logger: Logger, fields: LogFields, message: string): void {
  if (logger === DEFAULT_RECEIVER_LOGGER) console.warn(`[churn-risk] ${message}`, fields);
  else logger.warn(fields, message);
}

/**
 * Wraps a user's logger: a missing method is silent, a logger that throws never breaks the caller,
 * and `this` stays bound (pino's methods need it).
 */
export function toSafeLogger(logger: Partial<Logger>): Logger {
  const wrap =
    (method: LogMethod | undefined): LogMethod =>
    (fields, message) => {
      try {
        method?.call(logger, fields, message);
      } catch {
        // A logger's own failure is not the delivery's: nothing to report it to but the logger.
      }
    };
  return {
    debug: wrap(logger.debug),
    info: wrap(logger.info),
    warn: wrap(logger.warn),
    error: wrap(logger.error),
  };
}

/**
 * Checks the `logger` option: `undefined` gives `fallback`; anything else must be an object whose
 * present log methods are functions (a `TypeError` otherwise, at creation time).
 */
export function resolveLogger(logger: unknown, fallback: Logger, option = 'logger'): Logger {
  if (logger === undefined) return fallback;
  if (typeof logger !== 'object' || logger === null) {
    throw new TypeError(`${option} must be an object with debug, info, warn and error methods.`);
  }
  const methods = logger as Record<LogLevel, unknown>;
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    const method = methods[level];
    if (method !== undefined && typeof method !== 'function') {
      throw new TypeError(`${option}.${level} must be a function.`);
    }
  }
  return toSafeLogger(logger);
}
