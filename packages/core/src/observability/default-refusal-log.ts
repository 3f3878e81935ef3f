import type { WebhookErrorCode } from '../errors/webhook-error-status.js';
import type { Logger } from './logger.js';

/** The longest the default log stays silent while deliveries keep being refused with `401`. */
export const UNAUTHORIZED_SUMMARY_INTERVAL_MS = 60_000;

/** What to change for each `5xx` the receiver answers on its own (SPEC section 14). */
const SERVER_ERROR_FIXES: Partial<Record<WebhookErrorCode, string>> = {
  OVERLOADED:
    'Fix: the handlers are slower than the alerts arrive (raise `concurrency` or `maxQueue`, or ' +
    'add instances), or the queue store does not answer (see `receiver.health()`). The service ' +
    'retries.',
  CLOSED:
    'Fix: none needed during a shutdown or deploy (`receiver.close()` was called); the service ' +
    'retries. Otherwise, something closed the receiver too early.',
  HANDLER_FAILED:
    'Fix: see the handler error logged before this line; the service redelivers the alert.',
};

/** The usual cause of each `401` code, named in the summary line. */
const UNAUTHORIZED_CAUSES: Partial<Record<WebhookErrorCode, string>> = {
  INVALID_SIGNATURE:
    'INVALID_SIGNATURE: check that `secret` is the signing secret the service shows for this ' +
    'endpoint (while rotating, pass both) and that no body parser re-serialised the body.',
  MISSING_SIGNATURE:
    'MISSING_SIGNATURE: a proxy dropped the signature header, or the sender names it otherwise ' +
    '(`signatureHeader`).',
  MISSING_TIMESTAMP:
    'MISSING_TIMESTAMP: a proxy dropped the timestamp header, or the sender names it otherwise ' +
    '(`timestampHeader`).',
  INVALID_TIMESTAMP: 'INVALID_TIMESTAMP: the sender is not the churn-risk service.',
  TIMESTAMP_OUT_OF_TOLERANCE:
    "TIMESTAMP_OUT_OF_TOLERANCE: this server's clock is off (check NTP), or a delivery was replayed.",
};

/**
 * What the receiver writes when no `logger` was given (SPEC section 14), so that a misconfigured
 * receiver shows in the server's own log: each `5xx` answer with its code and fix, and at most one
 * line a minute summarising the `401` refusals (their count and codes). Only codes, counts and
 * fixed texts are written: never a secret, a signature or a body.
 */
export class DefaultRefusalLog {
  readonly #logger: Logger;
  readonly #now: () => number;
  /** The `401` codes counted since the last summary line; `undefined` when none. */
  #unauthorized: Map<string, number> | undefined;
  #unauthorizedSince = 0;
  #lastSummaryAt = Number.NEGATIVE_INFINITY;

  /**
   * @param logger the receiver's default logger (only its `error` method writes)
   * @param now the receiver's clock, in milliseconds
   */
  constructor(logger: Logger, now: () => number) {
    this.#logger = logger;
    this.#now = now;
  }

  /** A refused delivery: a `5xx` is written at once, a `401` counted (and maybe summarised). */
  refused(status: number, code: WebhookErrorCode, message: string): void {
    if (status === 401) this.#countUnauthorized(code);
    else if (status >= 500) {
      const fix = SERVER_ERROR_FIXES[code];
      this.#logger.error(
        { status, code },
        `churn-risk delivery refused with ${status} ${code}: ${message}${fix === undefined ? '' : ` ${fix}`}`,
      );
    }
  }

  #countUnauthorized(code: string): void {
    const now = this.#now();
    if (this.#unauthorized === undefined) {
      this.#unauthorized = new Map();
      this.#unauthorizedSince = now;
    }
    this.#unauthorized.set(code, (this.#unauthorized.get(code) ?? 0) + 1);
    const elapsed = now - this.#lastSummaryAt;
    // A clock set back (elapsed < 0) must not silence the summary until it catches up.
    if (elapsed >= 0 && elapsed < UNAUTHORIZED_SUMMARY_INTERVAL_MS) return;
    this.#writeSummary(this.#unauthorized, this.#unauthorizedSince);
    this.#unauthorized = undefined;
    this.#lastSummaryAt = now;
  }

  #writeSummary(counts: ReadonlyMap<string, number>, since: number): void {
    let total = 0;
    const codes: Record<string, number> = {};
    for (const [code, count] of counts) {
      total += count;
      codes[code] = count;
    }
    const list = [...counts].map(([code, count]) => `${code} x${count}`).join(', ');
    const causes = [...counts.keys()]
      .map((code) => UNAUTHORIZED_CAUSES[code as WebhookErrorCode])
      .filter((cause) => cause !== undefined)
      .join(' ');
    this.#logger.error(
      { status: 401, count: total, codes },
      `${total} ${total === 1 ? 'delivery' : 'deliveries'} refused with 401 since ` +
        `${Number.isFinite(since) ? new Date(since).toISOString() : 'start'} (${list}). ${causes} At most one such line a minute; ` +
        'pass a `logger` to see each refusal.',
    );
  }
}
