import type { OpsAuthorize, OpsHandlerOptions, OpsQueue } from './options.js';

/** `OpsHandlerOptions` checked, with the defaults filled in. */
export interface ResolvedOptions {
  queue: OpsQueue;
  /** `undefined` for `'none'`. */
  authorize: OpsAuthorize | undefined;
  csrfSecret: string | undefined;
  pageSize: number;
  refreshMs: number;
  timeoutMs: number;
  bodyTimeoutMs: number;
  /** Whether retried alerts wait for a sweep (no worker). */
  invocationMode: boolean;
  /** The receiver whose superseded count the page shows, if any. */
  receiver: OpsHandlerOptions['receiver'];
  logError: (fields: Record<string, unknown>, message: string) => void;
}

const KNOWN = new Set([
  'queue',
  'authorize',
  'csrfSecret',
  'pageSize',
  'refreshMs',
  'timeoutMs',
  'bodyTimeoutMs',
  'invocationMode',
  'receiver',
  'logger',
]);
export const MAX_PAGE_SIZE = 200;

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`createOpsHandler: ${name} must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

/**
 * `NODE_ENV` (read through `globalThis`: Workers may have no `process`), or `undefined` when it
 * is not set.
 */
function nodeEnv(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  return env?.NODE_ENV;
}

function checkQueue(queue: unknown): OpsQueue {
  const q = queue as Partial<Record<keyof OpsQueue, unknown>> | null | undefined;
  const methods = ['failed', 'retry', 'retryAll'] as const;
  if (typeof q !== 'object' || q === null || methods.some((m) => typeof q[m] !== 'function')) {
    throw new TypeError(
      'createOpsHandler needs queue: a back end queue with failed(), retry() and retryAll() ' +
        '(createRedisQueue, createPostgresQueue, createSqsQueue, or createFailedStore on D1).',
    );
  }
  return queue as OpsQueue;
}

function checkAuthorize(authorize: unknown): OpsAuthorize | undefined {
  if (typeof authorize === 'function') return authorize as OpsAuthorize;
  if (authorize === 'none') {
    const env = nodeEnv();
    if (env !== 'development' && env !== 'test') {
      throw new TypeError(
        "createOpsHandler: authorize: 'none' (anyone who reaches the URL) is accepted only while " +
          `NODE_ENV is exactly development or test, and it is ${env === undefined ? 'not set' : JSON.stringify(env)}. ` +
          'Pass authorize: basicAuth({ username, password }) or a check of your session; to try ' +
          'the page on your machine, run with NODE_ENV=development.',
      );
    }
    return undefined;
  }
  throw new TypeError(
    'createOpsHandler needs authorize: (request) => boolean | Promise<boolean>, which decides ' +
      'who may see failed alerts and retry them, such as basicAuth({ username, password }) ' +
      "(authorize: 'none' only while NODE_ENV is development or test).",
  );
}

/** Checks the options (a `TypeError` names the wrong one) and fills in the defaults. */
export function resolveOptions(options: OpsHandlerOptions): ResolvedOptions {
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new TypeError('createOpsHandler needs { queue, authorize }.');
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new TypeError(`createOpsHandler has no option ${key}.`);
  }
  const { csrfSecret, logger } = options;
  if (csrfSecret !== undefined && (typeof csrfSecret !== 'string' || csrfSecret.length < 32)) {
    throw new TypeError('createOpsHandler: csrfSecret must be a string of at least 32 characters.');
  }
  const sink = logger ?? console;
  const queue = checkQueue(options.queue);
  const { invocationMode = queue.invocationMode === true } = options;
  if (typeof invocationMode !== 'boolean') {
    throw new TypeError('createOpsHandler: invocationMode must be true or false.');
  }
  const { receiver } = options;
  const stats = (receiver as { stats?: { superseded?: unknown } } | undefined)?.stats;
  if (receiver !== undefined && typeof stats?.superseded !== 'number') {
    throw new TypeError('createOpsHandler: receiver must be a receiver made by createReceiver.');
  }
  return {
    queue,
    invocationMode,
    receiver,
    authorize: checkAuthorize(options.authorize),
    csrfSecret,
    pageSize: integer('pageSize', options.pageSize, 20, 1, MAX_PAGE_SIZE),
    refreshMs: integer('refreshMs', options.refreshMs, 5_000, 500, 3_600_000),
    timeoutMs: integer('timeoutMs', options.timeoutMs, 5_000, 100, 120_000),
    bodyTimeoutMs: integer('bodyTimeoutMs', options.bodyTimeoutMs, 10_000, 100, 300_000),
    logError: (fields, message) => {
      sink.error(fields, message);
    },
  };
}
