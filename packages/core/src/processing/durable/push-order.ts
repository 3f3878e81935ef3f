import type { AlertRecord } from '../../queue-port/alert-queue.js';
import type { Logger } from '../../observability/logger.js';
import type { TryLease, TryVerdict } from '../../queue-port/try-types.js';
import { orderKeyOf, type UserOrderKey } from './alert-store.js';

/** What `PushOrder.run` hands the try it starts: the lease, and what to do once it is applied. */
export type OrderedTry = (
  lease: TryLease,
  applied: (verdict: TryVerdict) => Promise<void>,
) => Promise<unknown>;

/**
 * What order per user needs of a push platform (SQS, Cloudflare Queues), where the platform
 * hands out messages and core cannot pick which: before a try, the consumer holds the message's
 * user in a shared table, or sends the message back to wait. A platform extends this class with
 * its `claim` and `release` and passes it as `createPushQueue({ order })`. (A class, so that its
 * code is bundled only where an order is made: a queue without one carries none of it.)
 */
export abstract class PushOrder {
  /**
   * Before a try of `message` (`key` is its user and time): holds the user for this alert, in one
   * conditional write, when it may start now: no other alert holds the user, and no alert of the
   * user recorded by `send` and not yet done is older (or this alert already holds the user: a
   * retry or a redelivery). Resolves `{ newest }`, the newest time accepted for the user, when it
   * holds; `{ waitMs }` when the alert must wait (it goes back to the platform queue for that
   * long, with no try counted).
   */
  abstract claim(
    message: AlertRecord<'delivered'>,
    key: UserOrderKey,
  ): Promise<{ readonly newest: number } | { readonly waitMs: number }>;

  /**
   * After a `completed` or `failed` verdict was applied: the alert is done in the user's line and
   * releases the user. A `retry` keeps the hold (the next try's `claim` finds the alert holding).
   */
  abstract release(message: AlertRecord<'delivered'>, key: UserOrderKey): Promise<void>;

  /**
   * One delivered message in order (called by the push queue): `claim`, then either `postpone`
   * (the alert waits: no try runs) or the try, superseded when a later alert of the user was
   * accepted, and after a `completed` or `failed` verdict went through, `release`. The verdict
   * went through already when `release` runs, so a release that rejects does not fail it (the
   * platform would run the alert again): it is logged, and the platform's hold lapses on its own.
   */
  async run(
    message: AlertRecord<'delivered'>,
    postpone: (delayMs: number) => Promise<unknown>,
    start: OrderedTry,
    lease: TryLease,
    logger: Logger,
  ): Promise<unknown> {
    const key = orderKeyOf(message);
    const claimed = await this.claim(message, key);
    if ('waitMs' in claimed) return postpone(Math.max(0, claimed.waitMs));
    const { newest } = claimed;
    return start(
      newest > key.at ? { ...lease, supersededBy: new Date(newest).toISOString() } : lease,
      async (verdict) => {
        if (verdict.outcome === 'retry') return;
        try {
          await this.release(message, key);
        } catch (error) {
          logger.error(
            { id: message.id, userId: key.user, err: error },
            `churn-risk: alert ${message.id} did not release its user; its hold lapses.`,
          );
        }
      },
    );
  }
}
