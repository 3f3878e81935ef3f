import type { AlertRecord } from '@churn-risk/core/store';
import { isObject } from '../event-request.js';

/**
 * The body of a queue mode message (JSON): the accepted alert, the tries made before the one this
 * message starts, and the ids of the handlers that already succeeded for it. A retry is a new
 * message with the new count and record, so the record travels with the alert. `notBefore`
 * (ms since the epoch) marks a retry whose delay is longer than SQS's 15 minutes: the consumer
 * sends it on again, in hops of at most 15 minutes, until it is due. `stalls` (order per user) are
 * the deliveries without a verdict of the message that a postponed alert was sent back from.
 */
export interface SqsAlertMessage {
  /** The format's version. */
  readonly churnRisk: 1;
  readonly entry: AlertRecord<'accepted'>;
  readonly tries: number;
  readonly succeeded: readonly string[];
  readonly notBefore?: number;
  readonly stalls?: number;
}

/** SQS's longest `DelaySeconds` (15 minutes). */
export const MAX_DELAY_SECONDS = 900;

/** The message that carries `entry` to try number `tries` (0 for the first). */
export function messageOf(
  entry: AlertRecord<'accepted'>,
  tries: number,
  succeeded: readonly string[],
): SqsAlertMessage {
  return { churnRisk: 1, entry, tries, succeeded };
}

/**
 * How long SQS holds a message due in `delayMs`: whole seconds, rounded up (never earlier than
 * core asked), at most 15 minutes. A longer delay is sent on in hops (`notBefore`).
 */
export function delaySecondsOf(delayMs: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(delayMs / 1000)));
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/**
 * A message body as an alert message, or `undefined` for one that is not (not JSON, or another
 * shape). Only this package's producer writes to the queue, so the shape is checked, not the
 * alert again.
 */
export function parseMessage(body: string): SqsAlertMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isObject(value) || value.churnRisk !== 1 || !isCount(value.tries)) return undefined;
  const { entry, succeeded, notBefore = 0, stalls = 0 } = value;
  if (!Array.isArray(succeeded) || !succeeded.every((id) => typeof id === 'string')) return;
  if (!isCount(notBefore) || !isCount(stalls)) return undefined;
  if (!isObject(entry) || typeof entry.id !== 'string' || typeof entry.receivedAt !== 'number') {
    return undefined;
  }
  if (!isObject(entry.alert)) return undefined;
  return value as unknown as SqsAlertMessage;
}
