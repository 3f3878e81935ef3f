import type { WebhookErrorCode } from '../errors/webhook-error-status.js';
import type { Logger } from './logger.js';
import { startTimer } from '../processing/maybe-promise.js';

/**
 * The longest the default log stays silent while deliveries keep being refused with one of the
 * summarised statuses (`401`, `413`, `400`): at most one summary line a minute for each.
 */
export const REFUSAL_SUMMARY_INTERVAL_MS = 60_000;

/** What to change for each `5xx` the receiver answers on its own. */
const SERVER_ERROR_FIXES: Partial<Record<WebhookErrorCode, string>> = {
  OVERLOADED:
    'Fix: handlers slower than the alerts (raise `concurrency` or `maxQueue`, or scale out), or ' +
    'the queue store not answering (`receiver.health()`). The service retries.',
  CLOSED:
    'Fix: none needed during a shutdown or deploy (`receiver.close()`); else the receiver closed ' +
    'too early. The service retries.',
  HANDLER_FAILED: 'Fix: see the handler error logged before this line; the service redelivers.',
};

/** The fix of a `503` whose cause is the queue store's own error. */
function storeFix(storeError: string): string {
  return (
    `The queue store failed: ${storeError.replace(/(?<![.!?])$/, '.')} Fix: make the store ` +
    'reachable and writable (URL, rights; `receiver.health()`). The service retries.'
  );
}

/** The usual cause of each summarised code, named in its status's summary line. */
const REFUSAL_CAUSES: Partial<Record<WebhookErrorCode, string>> = {
  INVALID_SIGNATURE:
    "`secret` is not this endpoint's signing secret (while rotating, pass both), or a body " +
    'parser re-serialised the body.',
  MISSING_SIGNATURE:
    'a proxy dropped the signature header, or it has another name (`signatureHeader`).',
  MISSING_TIMESTAMP:
    'a proxy dropped the timestamp header, or it has another name (`timestampHeader`).',
  INVALID_TIMESTAMP: 'the sender is not the churn-risk service.',
  TIMESTAMP_OUT_OF_TOLERANCE: "this server's clock is off (check NTP), or a replay.",
  PAYLOAD_TOO_LARGE:
    'a body over `maxBodyBytes` (alerts are a few hundred bytes): another sender, or the limit ' +
    'is too low.',
  INVALID_PAYLOAD:
    'a signed body that is not a valid alert: a newer service (update @churn-risk/core), or ' +
    'another sender with this secret (a `logger` shows what was wrong).',
};

/** The statuses the default log summarises, instead of writing each refusal. */
const SUMMARISED_STATUSES: readonly number[] = [401, 413, 400];

/** Schedules `run` after `ms` without keeping the process alive; returns how to cancel it. */
export type ScheduleSummary = (run: () => void, ms: number) => () => void;

/** `setTimeout`, `unref`'d where the platform can (Node, Bun, Deno): a summary never holds an exit. */
export const scheduleUnrefd: ScheduleSummary = startTimer;

/** What the default log does with each refusal, and at `receiver.close()`. */
export interface DefaultRefusalLog {
  /**
   * A refused delivery: a `5xx` is written at once, a `401`, `413` or `400` counted. `storeError`:
   * the message of the queue store's own error, when the store refused the write or did not
   * answer (the line then names it, and not the handlers' speed).
   */
  refused(status: number, code: WebhookErrorCode, message: string, storeError?: string): void;
  /**
   * Writes every pending summary now and cancels their timers: at `receiver.close()`, so that the
   * refusals of a process's last minute are not lost with it.
   */
  flush(): void;
}

/**
 * What the receiver writes when no `logger` was given, so that a
 * misconfigured receiver shows in the server's own log: each `5xx` answer with its code and fix,
 * and for `401`, `413` and `400` refusals at most one line a minute each, summarising them (their
 * count and codes, with each code's usual cause). Only codes, counts and fixed texts are written:
 * never a secret, a signature, a body or a refusal's message.
 *
 * Each summarised status counts its refusals per code since its last line, and writes them at most
 * once every `REFUSAL_SUMMARY_INTERVAL_MS`: the first refusal after a quiet minute at once; the ones
 * within the minute after a line when that minute ends (a timer that does not keep the process
 * alive), or at the next refusal after it, whichever comes first. (Closures rather than classes: a
 * bundled receiver carries this code whenever it has no `logger`, and they minify smaller.)
 *
 * @param logger the receiver's default logger (only its `error` method writes)
 * @param now the receiver's clock, in milliseconds
 * @param schedule the timer of a minute's end (tests pass their own)
 */
export function createDefaultRefusalLog(
  logger: Logger,
  now: () => number,
  schedule: ScheduleSummary = scheduleUnrefd,
): DefaultRefusalLog {
  /** Each summarised status's counter: `count(code)`, or `count()` to write what is pending. */
  const summaries = new Map<number, (code?: string) => void>();
  for (const status of SUMMARISED_STATUSES) {
    /** The codes counted since the last line; `undefined` when none. */
    let counts: Map<string, number> | undefined;
    let since = 0;
    let lastLineAt = Number.NEGATIVE_INFINITY;
    /** Cancels the timer of the minute's end; `undefined` when none is pending. */
    let cancel: (() => void) | undefined;
    const flush = (): void => {
      cancel?.();
      cancel = undefined;
      if (counts === undefined) return;
      writeSummary(logger, status, counts, since);
      counts = undefined;
      lastLineAt = now();
    };
    summaries.set(status, (code) => {
      if (code === undefined) {
        flush();
        return;
      }
      const at = now();
      if (counts === undefined) {
        counts = new Map();
        since = at;
      }
      counts.set(code, (counts.get(code) ?? 0) + 1);
      const elapsed = at - lastLineAt;
      // A clock set back (elapsed < 0) must not silence the summary until it catches up.
      if (elapsed >= 0 && elapsed < REFUSAL_SUMMARY_INTERVAL_MS) {
        cancel ??= schedule(() => {
          cancel = undefined;
          flush();
        }, REFUSAL_SUMMARY_INTERVAL_MS - elapsed);
        return;
      }
      flush();
    });
  }
  return {
    refused(status, code, message, storeError) {
      const summary = summaries.get(status);
      if (summary !== undefined) summary(code);
      else if (status >= 500) {
        const fix = storeError === undefined ? SERVER_ERROR_FIXES[code] : storeFix(storeError);
        logger.error(
          { status, code },
          `churn-risk delivery refused with ${status} ${code}: ${message}${fix === undefined ? '' : ` ${fix}`}`,
        );
      }
    },
    flush() {
      for (const summary of summaries.values()) summary();
    },
  };
}

/** One summary line: the status's refusals since `since`, per code, with each code's usual cause. */
function writeSummary(
  logger: Logger,
  status: number,
  counts: ReadonlyMap<string, number>,
  since: number,
): void {
  let total = 0;
  const codes: Record<string, number> = {};
  for (const [code, count] of counts) {
    total += count;
    codes[code] = count;
  }
  const list = [...counts].map(([code, count]) => `${code} x${count}`).join(', ');
  const causes = [...counts.keys()]
    .filter((code) => REFUSAL_CAUSES[code as WebhookErrorCode] !== undefined)
    .map((code) => `${code}: ${REFUSAL_CAUSES[code as WebhookErrorCode]}`)
    .join(' ');
  logger.error(
    { status, count: total, codes },
    `${total} ${total === 1 ? 'delivery' : 'deliveries'} refused with ${status} since ` +
      `${Number.isFinite(since) ? new Date(since).toISOString() : 'start'} (${list}). ${causes} At most one line a minute; ` +
      'a `logger` shows each refusal.',
  );
}
