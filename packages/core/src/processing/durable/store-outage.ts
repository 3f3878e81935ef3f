import type { Logger } from '../../observability/logger.js';

/** An error's message, for log lines and errors that name a cause. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether a durable queue's store answers, as its takes, reclaims and stall records found it: an
 * outage is logged once when it starts and once when it ends, never per failed call.
 */
export class StoreOutage {
  readonly #kind: string;
  #down = false;

  constructor(kind: string) {
    this.#kind = kind;
  }

  /** A call to the store failed. */
  failed(logger: Logger, error: unknown): void {
    if (this.#down) return;
    this.#down = true;
    logger.error(
      { queue: this.#kind, err: error },
      `churn-risk: the ${this.#kind} store does not answer (${describe(error)}); alerts are taken ` +
        'again once it does',
    );
  }

  /** A call to the store answered. */
  answered(logger: Logger): void {
    if (!this.#down) return;
    this.#down = false;
    logger.warn({ queue: this.#kind }, `churn-risk: the ${this.#kind} store answers again`);
  }
}
