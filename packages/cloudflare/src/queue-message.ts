import type { AlertRecord } from '@churn-risk/core/store';

/**
 * The body of a queue mode message: the accepted alert, the tries made before the one this
 * message starts, and the ids of the handlers that already succeeded for it. A retry is a new
 * message with the new count and record (a platform retry, `message.retry()`, cannot change a
 * body), so the record travels with the alert and needs no other store.
 *
 * A message sent again because a verdict could not be stored (cloudflare-queue.ts) also carries
 * the stalls counted so far (the new message starts again at `attempts` 1) and how often the
 * alert was sent again that way, which sets the next delay.
 */
export interface AlertMessage {
  /** The format's version. */
  readonly churnRisk: 1;
  readonly entry: AlertRecord<'accepted'>;
  readonly tries: number;
  readonly succeeded: readonly string[];
  /** Deliveries without a verdict (the consumer died) of earlier messages of this try. */
  readonly stalls?: number;
  /** Verdicts of this alert that could not be stored, in a row (each re-sent the alert). */
  readonly deferrals?: number;
  /**
   * Order per user: the times this try was sent again to wait for its user (no try ran), which
   * sets the next wait.
   */
  readonly postponements?: number;
}

/** The message that carries `entry` to try number `tries` (0 for the first). */
export function messageOf(
  entry: AlertRecord<'accepted'>,
  tries: number,
  succeeded: readonly string[],
): AlertMessage {
  return { churnRisk: 1, entry, tries, succeeded };
}

const count = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/**
 * `body` as an alert message, or `undefined` for a body that is not one. Only this package's
 * producer writes to the queue, so the shape is checked, not the alert again.
 */
export function parseMessage(body: unknown): AlertMessage | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const {
    churnRisk,
    entry,
    tries,
    succeeded,
    stalls = 0,
    deferrals = 0,
    postponements = 0,
  } = body as Partial<AlertMessage>;
  if (churnRisk !== 1 || typeof entry !== 'object' || (entry as unknown) === null) return undefined;
  if (!count(tries) || !count(stalls) || !count(deferrals) || !count(postponements)) {
    return undefined;
  }
  if (!Array.isArray(succeeded) || !succeeded.every((id) => typeof id === 'string')) {
    return undefined;
  }
  if (typeof entry.id !== 'string' || typeof entry.receivedAt !== 'number') return undefined;
  if (typeof entry.alert !== 'object' || (entry.alert as unknown) === null) return undefined;
  return { churnRisk, entry, tries, succeeded, stalls, deferrals, postponements };
}
