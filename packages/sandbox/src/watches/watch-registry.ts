import * as wire from '@churn-risk/core/wire';
import type { WatchOptions } from '../wire-types.js';

/** A watch as stored: the `WatchedUser` of the API plus its alert bookkeeping. */
export interface Watch {
  userId: string;
  threshold: number;
  webhook: string;
  cooldown: string;
  /** The cooldown in milliseconds. */
  cooldownMs: number;
  /** When this watch last sent an alert, ms since the epoch. */
  lastAlertAt?: number;
}

/** The `WatchedUser` answer of `PUT /v1/users/:userId/watch`. */
export interface WatchedUser {
  userId: string;
  threshold: number;
  webhook: string;
  cooldown: string;
}

/** One watch per user. */
export interface WatchRegistry {
  get(userId: string): Watch | undefined;
  /** Registers a watch, replacing any earlier one (whose cooldown does not carry over). */
  set(userId: string, options: WatchOptions): WatchedUser;
  /** Removes the watch; false when there was none. */
  remove(userId: string): boolean;
  list(): Watch[];
}

/** The public shape of a watch. */
export function toWatchedUser(watch: Watch): WatchedUser {
  return {
    userId: watch.userId,
    threshold: watch.threshold,
    webhook: watch.webhook,
    cooldown: watch.cooldown,
  };
}

/** Creates an empty registry. */
export function createWatchRegistry(): WatchRegistry {
  const watches = new Map<string, Watch>();
  return {
    get: (userId) => watches.get(userId),
    set(userId, options) {
      const watch: Watch = { userId, ...options, cooldownMs: wire.cooldownToMs(options.cooldown) };
      watches.set(userId, watch);
      return toWatchedUser(watch);
    },
    remove: (userId) => watches.delete(userId),
    list: () => [...watches.values()],
  };
}
