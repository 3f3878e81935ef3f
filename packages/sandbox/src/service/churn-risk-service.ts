import type { Deliveries, DeliveryRecord } from '../deliveries/delivery-record.js';
import type { SandboxClock } from '../clock/clock.js';
import { scoreUser, type ComputedRisk } from '../scoring/score-user.js';
import { createUserStore, type ScoreChange, type UserStore } from '../users/user-store.js';
import { buildAlert } from '../watches/build-alert.js';
import { shouldAlert } from '../watches/check-crossing.js';
import {
  createWatchRegistry,
  type WatchedUser,
  type WatchRegistry,
} from '../watches/watch-registry.js';
import type { AtRiskQuery, EventItem, UserTraits, WatchOptions } from '../wire-types.js';
import * as wire from '@churn-risk/core/wire';

/** A `RiskScore` of the API. */
export interface RiskScore extends ComputedRisk {
  userId: string;
}

/** An `AtRiskResult` of the API. */
export interface AtRiskResult {
  users: RiskScore[];
  total: number;
  offset: number;
  limit: number;
}

/** The service behind the routes: users, scores, watches and the alerts they fire. */
export interface ChurnRiskService {
  readonly users: UserStore;
  readonly watches: WatchRegistry;
  /** Merges `traits` into the user's stored traits (creating the user) and rescores them. */
  identify(userId: string, traits: UserTraits): void;
  /** Records events; returns how many were accepted. */
  track(items: readonly EventItem[]): number;
  /** The user's current risk score; `undefined` for an unknown user. */
  risk(userId: string): RiskScore | undefined;
  /** Users at or above `query.threshold`, highest score first (ties by user id), paged. */
  atRisk(query: AtRiskQuery): AtRiskResult;
  /** Sets (or replaces) the user's watch; a replaced watch starts afresh, with no cooldown. */
  watch(userId: string, options: WatchOptions): WatchedUser;
  /** Removes the user's watch; `false` when there was none. */
  unwatch(userId: string): boolean;
  /** Rescores every user at the clock's time (after time travel); crossings fire their watches. */
  rescoreAll(): void;
  /**
   * Sends a test alert built from the user's current risk to the user's watch webhook (cooldown
   * ignored, nothing recorded on the watch); `undefined` when the user has no watch.
   */
  sendTestAlert(userId: string): DeliveryRecord | undefined;
}

/** Creates the in-memory service; alerts go to `deliveries`. */
export function createChurnRiskService(
  clock: SandboxClock,
  deliveries: Deliveries,
): ChurnRiskService {
  const users = createUserStore(clock);
  const watches = createWatchRegistry();

  const onChange = (change: ScoreChange): void => {
    const watch = watches.get(change.userId);
    const now = clock.now();
    if (!watch || !shouldAlert(watch, change.before, change.after.score, now)) return;
    watch.lastAlertAt = now;
    deliveries.enqueue(buildAlert(change.userId, change.after, now), watch.webhook);
  };

  const toRiskScore = (userId: string, risk: ComputedRisk): RiskScore => ({
    userId,
    ...risk,
    signals: [...risk.signals],
  });

  return {
    users,
    watches,
    identify(userId, traits) {
      onChange(users.identify(userId, traits));
    },
    track(items) {
      users.track(items).forEach(onChange);
      return items.length;
    },
    risk(userId) {
      const user = users.get(userId);
      return user && toRiskScore(userId, user.risk);
    },
    atRisk(query) {
      const threshold = query.threshold ?? wire.AT_RISK_DEFAULTS.threshold;
      const limit = query.limit ?? wire.AT_RISK_DEFAULTS.limit;
      const offset = query.offset ?? wire.AT_RISK_DEFAULTS.offset;
      const matching = [...users.all()]
        .filter(
          (user) =>
            user.risk.score >= threshold &&
            (query.plan === undefined || user.traits['plan'] === query.plan),
        )
        .sort(
          (a, b) =>
            b.risk.score - a.risk.score || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0),
        );
      const page = matching
        .slice(offset, offset + limit)
        .map((user) => toRiskScore(user.userId, user.risk));
      return { users: page, total: matching.length, offset, limit };
    },
    watch: (userId, options) => watches.set(userId, options),
    unwatch: (userId) => watches.remove(userId),
    rescoreAll() {
      users.rescoreAll().forEach(onChange);
    },
    sendTestAlert(userId) {
      const watch = watches.get(userId);
      if (!watch) return undefined;
      const now = clock.now();
      const risk = users.get(userId)?.risk ?? scoreUser({ traits: {}, events: [] }, now);
      return deliveries.enqueue(buildAlert(userId, risk, now), watch.webhook);
    },
  };
}
