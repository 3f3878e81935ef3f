import { AlertCutOffError } from '../errors/handlers-failed-error.js';
import { callErrorHandlers } from './failure-report.js';
import { isPromiseLike } from './maybe-promise.js';
import { contextOf, recordKey, type TriesSoFar } from './try-protocol.js';
import type { TryInput } from '../queue-port/try-types.js';
import type { KeepAlive } from '../queue-port/alert-queue.js';

// No silent cut-off: an alert kept alive by a platform `waitUntil` has the platform's
// budget (Cloudflare cancels such work 30 s after the answer). The in-memory queue's tries run
// under a guard, in the one engine (`runTryAndApply`): the queue's `apply` keeps no retry whose
// delay ends past the cut-off point and reports the cut-off instead, and if that point comes while
// a try is still running, the guard's timer reports it. Either way the alert is reported once
// (`onError` with `CUT_OFF`, one `error` line naming the fix) while there is still time to write
// it, and a `failed` verdict after that goes through no more (`claim`).

/**
 * Cloudflare Workers (workerd) identify themselves by `navigator.userAgent`. There each request has
 * an I/O context of its own, and work handed to `ctx.waitUntil` is cancelled 30 s after the answer.
 */
export const PER_REQUEST_CONTEXTS =
  (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent ===
  'Cloudflare-Workers';

/** How long Cloudflare Workers keep what `ctx.waitUntil` holds after the answer: 30 s. */
export const WORKERS_KEEP_ALIVE_BUDGET_MS = 30_000;

/** `keepAliveBudgetMs` by default: Workers' 30 s in workerd, no budget elsewhere. */
export const DEFAULT_KEEP_ALIVE_BUDGET_MS: number | undefined = PER_REQUEST_CONTEXTS
  ? WORKERS_KEEP_ALIVE_BUDGET_MS
  : undefined;

/**
 * The point of the budget at which a cut-off is reported: 90 % of it, and never more than 5 s
 * before its end (27 s of Workers' 30 s), leaving time for `onError` and the log line.
 */
export function cutOffPoint(budgetMs: number): number {
  return budgetMs - Math.min(5_000, Math.ceil(budgetMs / 10));
}

/** The cut-off guard of one alert's in-memory tries. */
export class KeepAliveGuard {
  readonly #input: TryInput;
  readonly #budgetMs: number;
  readonly #cutOffAt: number;
  readonly #tries: TriesSoFar;
  #reported = false;
  /** True once the cut-off was reported: nothing else is reported or tried for the alert. */
  cut = false;

  /** `tries`: where the alert's tries are, as the queue keeps it (the try running or last run). */
  constructor(input: TryInput, keepAlive: KeepAlive, tries: TriesSoFar) {
    this.#input = input;
    this.#tries = tries;
    this.#budgetMs = keepAlive.budgetMs;
    this.#cutOffAt = keepAlive.startedAt + cutOffPoint(keepAlive.budgetMs);
  }

  /** Whether a retry after `delayMs` starts before the cut-off point. */
  allows(delayMs: number): boolean {
    return Date.now() + delayMs < this.#cutOffAt;
  }

  /**
   * Claims the alert's one report: true for the first caller (the last try's failures, or the
   * cut-off), false after.
   */
  claim(): boolean {
    if (this.#reported) return false;
    this.#reported = true;
    return true;
  }

  /**
   * Runs `work` (the alert's tries), and reports the cut-off if the cut-off point comes first:
   * settles when `work` does, or with the report.
   */
  run(work: () => unknown): unknown {
    const remaining = this.#cutOffAt - Date.now();
    if (remaining <= 0) return this.cutOff();
    const result = work();
    if (!isPromiseLike(result)) return result;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        resolve(this.cutOff());
      }, remaining);
      void result.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Reports the cut-off once (`cause`: the last try's error, when a try failed). */
  async cutOff(cause?: unknown): Promise<void> {
    if (!this.claim()) return;
    this.cut = true;
    const input = this.#input;
    const { tries: attempt, succeeded } = this.#tries;
    const pending = input.handlers.flatMap((entry, index) =>
      succeeded.includes(recordKey(entry, index)) ? [] : [entry.id ?? `#${String(index)}`],
    );
    const error = new AlertCutOffError(this.#budgetMs, pending, cause);
    input.counts.failed++;
    input.observer.logger.error(
      {
        id: input.id,
        code: error.code,
        budgetMs: this.#budgetMs,
        pending,
        tries: attempt + 1,
      },
      `Alert ${input.id} was cut off after ${String(attempt + 1)} ` +
        `${attempt === 0 ? 'try' : 'tries'}: ${error.message} No further try runs. ` +
        'Fix: process alerts in a durable queue, which no platform budget cuts off: queue mode ' +
        'on Cloudflare Workers (@churn-risk/cloudflare, createQueueWorker), or ' +
        '@churn-risk/postgres / @churn-risk/redis elsewhere.',
    );
    await callErrorHandlers(input, contextOf(input, attempt), error);
  }
}
