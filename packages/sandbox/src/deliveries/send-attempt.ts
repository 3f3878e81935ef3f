import { signPayload, type SignedHeaders } from '@churn-risk/core/testing';
import type { SandboxClock } from '../clock/clock.js';

/** One try of a delivery, as the log shows it. */
export interface DeliveryAttempt {
  /** When the try was sent, ISO 8601 UTC. */
  at: string;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why there was no answer (time-out, connection refused ...). */
  error?: string;
  /** From sending to the answer (or failure), by the sandbox's clock. */
  durationMs: number;
  /** Chaos: this try repeated an acknowledged one, byte-identical (it changes nothing in the log). */
  duplicate?: true;
  /** Chaos: this try was signed with a wrong secret. */
  badSignature?: true;
  /** Chaos: this try waited this many real milliseconds before it was sent. */
  delayedMs?: number;
}

/** What one try needs. */
export interface SendAttemptOptions {
  webhook: string;
  /** The exact body bytes, the same on every try. */
  body: string;
  secret: string;
  /** The time to sign with, ms (a duplicate repeats its original's); default the time of sending. */
  signedAt?: number;
  clock: SandboxClock;
  timeoutMs: number;
  /** Aborts the try (the sandbox is closing). */
  signal: AbortSignal;
}

/** Header names of a delivery. */
export const SIGNATURE_HEADER = 'X-Service-Signature';
export const TIMESTAMP_HEADER = 'X-Service-Timestamp';

/**
 * Sends one signed try: signed afresh with the time of sending, time-out `timeoutMs` on the injected
 * clock. Never throws: a failure is reported in `error`.
 */
export async function sendAttempt(options: SendAttemptOptions): Promise<DeliveryAttempt> {
  const { clock } = options;
  const startedAt = clock.now();
  const at = new Date(startedAt).toISOString();
  let signed: SignedHeaders;
  try {
    signed = signPayload({
      body: options.body,
      secret: options.secret,
      timestamp: (options.signedAt ?? startedAt) / 1000,
    });
  } catch (error) {
    return {
      at,
      error: `could not sign the delivery: ${describeError(error)}`,
      durationMs: clock.now() - startedAt,
    };
  }
  const { signature, timestamp } = signed;
  const controller = new AbortController();
  const onAbort = (): void => {
    controller.abort(new Error('the sandbox closed'));
  };
  options.signal.addEventListener('abort', onAbort);
  const timer = clock.setTimeout(() => {
    controller.abort(new Error(`timed out after ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  try {
    const response = await fetch(options.webhook, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [SIGNATURE_HEADER]: signature,
        [TIMESTAMP_HEADER]: timestamp,
      },
      body: options.body,
      redirect: 'manual',
      signal: controller.signal,
    });
    await response.body?.cancel();
    return { at, status: response.status, durationMs: clock.now() - startedAt };
  } catch (error) {
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
    return { at, error: describeError(reason), durationMs: clock.now() - startedAt };
  } finally {
    clock.clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
  }
}

/** An error as one line for `DeliveryAttempt.error`: its message, and its cause's. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
