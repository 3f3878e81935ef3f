/** A handler that failed a try: its registration index, its id when it has one, and its error. */
export interface FailedHandler {
  index: number;
  id: string | undefined;
  error: unknown;
}

function summary(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : 'a non-Error value was thrown';
}

/**
 * A try of an alert in which one or more handlers failed: what a durable queue stores as the
 * alert's error (the failed set shows its message). The message names the handlers by id (by
 * registration index when they have none) and gives the first one's error; `cause` is that error.
 */
export class HandlersFailedError extends Error {
  override readonly name = 'HandlersFailedError';
  /** The ids (or, for a handler without one, `#<index>`) of the handlers that failed. */
  readonly handlers: readonly string[];

  constructor(failures: readonly FailedHandler[]) {
    const names = failures.map((failure) => failure.id ?? `#${String(failure.index)}`);
    const first = failures[0]?.error;
    const which = names.length === 1 ? `Handler ${names.join('')}` : `Handlers ${names.join(', ')}`;
    super(`${which} failed: ${summary(first)}`, { cause: first });
    this.handlers = names;
  }
}

/**
 * A durable queue failed the alert without a try: its worker died mid-alert more times than the
 * queue allows (an alert that crashes every process that takes it). `onError` gets it once.
 */
export class AlertStalledError extends Error {
  override readonly name = 'AlertStalledError';
  /** How often the alert's worker died mid-alert. */
  readonly stalls: number;

  constructor(stalls: number, message?: string) {
    super(
      message ??
        `The alert stalled: its worker died mid-alert ${String(stalls)} times, so it was moved to ` +
          'the failed set instead of being taken over again.',
    );
    this.stalls = stalls;
  }
}
