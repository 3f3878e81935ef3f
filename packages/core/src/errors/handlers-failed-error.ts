import { ChurnRiskError } from './churn-risk-error.js';
/** A handler that failed a try: its registration index, its id when it has one, and its error. */
export interface FailedHandler {
  index: number;
  id: string | undefined;
  error: unknown;
}

/**
 * A try of an alert in which one or more handlers failed: what a durable queue stores as the
 * alert's error (the failed set shows its message). The message names the handlers by id (by
 * registration index when they have none) and gives the first one's error; `cause` is that error.
 */
export class HandlersFailedError extends ChurnRiskError {
  override readonly name = 'HandlersFailedError';
  override readonly code = 'TRY_FAILED' as const;
  /** The ids (or, for a handler without one, `#<index>`) of the handlers that failed. */
  readonly handlers: readonly string[];

  constructor(failures: readonly FailedHandler[]) {
    const names = failures.map((failure) => failure.id ?? `#${String(failure.index)}`);
    const first = failures[0]?.error;
    const which = names.length === 1 ? `Handler ${names.join('')}` : `Handlers ${names.join(', ')}`;
    super(`${which} failed: ${describeError(first)}`, { cause: first });
    this.handlers = names;
  }
}

/**
 * A durable queue failed the alert without a try: its worker died mid-alert more times than the
 * queue allows (an alert that crashes every process that takes it). `onError` gets it once.
 */
export class AlertStalledError extends ChurnRiskError {
  override readonly name = 'AlertStalledError';
  override readonly code = 'ALERT_STALLED' as const;
  /** How often the alert's worker died mid-alert. */
  readonly stalls: number;

  constructor(stalls: number, message?: string) {
    super(
      message ??
        `Failed as poison (stalls: ${String(stalls)}, each a crash or a freeze mid-alert): fix ` +
          'that, then retry it.',
    );
    this.stalls = stalls;
  }
}

/**
 * The platform's keep-alive budget (`keepAliveBudgetMs`: work handed to `waitUntil` is cancelled
 * that long after the answer, 30 s on Cloudflare Workers) was about to end while the alert was not
 * done, or its next retry would have ended past it. `onError` gets it once, no further try runs,
 * and one line is logged at `error` naming the fix (a durable queue). `cause` is the last try's
 * error, when a try failed.
 */
export class AlertCutOffError extends ChurnRiskError {
  override readonly name = 'AlertCutOffError';
  override readonly code = 'CUT_OFF' as const;
  /** The budget, in milliseconds. */
  readonly budgetMs: number;
  /**
   * The handlers (ids, or `#<index>`) not recorded as succeeded for the alert: those that failed
   * the last try, or all the handlers of a try still running at the cut-off.
   */
  readonly pending: readonly string[];

  constructor(budgetMs: number, pending: readonly string[], cause?: unknown) {
    super(
      `The alert was cut off: the platform stops work kept alive by waitUntil ` +
        `${String(budgetMs)} ms after the answer (keepAliveBudgetMs), and ` +
        `${pending.length === 1 ? 'handler' : 'handlers'} ${pending.join(', ')} ` +
        `${pending.length === 1 ? 'was' : 'were'} not done.`,
      cause === undefined ? undefined : { cause },
    );
    this.budgetMs = budgetMs;
    this.pending = pending;
  }
}

/** An error in a few words, for a log line or a message that names a cause: `Name: message`. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : 'a non-Error value was thrown';
}
