import type { Chaos } from '../chaos/chaos.js';
import type { SandboxClock } from '../clock/clock.js';
import { describeError, type DeliveryAttempt, type SendAttemptOptions } from './send-attempt.js';
import { waitRealTime } from './wait-real-time.js';

/** What `createTrySender` needs. */
export interface TrySenderOptions {
  send: (options: SendAttemptOptions) => Promise<DeliveryAttempt>;
  chaos: Chaos;
  clock: SandboxClock;
  secret: string;
  timeoutMs: number;
  /** Aborts a chaos delay and a try in flight (the sandbox is closing). */
  signal: AbortSignal;
}

/**
 * Returns the function that sends one try of a delivery, with chaos applied: a random delay first,
 * maybe a wrong signature. With `signedAt` it sends a chaos duplicate of an acknowledged try (same
 * body, same timestamp, hence the same signature). Never rejects: a try that throws, synchronously
 * or not, for any reason, is a failed try with its `error` (retried like a network error).
 */
export function createTrySender(
  options: TrySenderOptions,
): (target: { webhook: string; body: string }, signedAt?: number) => Promise<DeliveryAttempt> {
  const { chaos, clock } = options;
  return async (target, signedAt) => {
    const delayedMs = chaos.extraDelayMs();
    const badSignature = signedAt === undefined && chaos.badSignature();
    let startedAt = clock.now();
    let attempt: DeliveryAttempt;
    try {
      await waitRealTime(delayedMs, options.signal);
      startedAt = clock.now();
      attempt = await options.send({
        webhook: target.webhook,
        body: target.body,
        secret: badSignature ? `${options.secret}~chaos` : options.secret,
        clock,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        ...(signedAt !== undefined && { signedAt }),
      });
    } catch (error) {
      const at = new Date(startedAt).toISOString();
      attempt = { at, error: describeError(error), durationMs: clock.now() - startedAt };
    }
    return {
      ...attempt,
      ...(signedAt !== undefined && { duplicate: true as const }),
      ...(badSignature && { badSignature: true as const }),
      ...(delayedMs > 0 && { delayedMs }),
    };
  };
}
