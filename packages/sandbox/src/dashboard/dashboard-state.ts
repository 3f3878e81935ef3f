import type * as wire from '@churn-risk/core/wire';
import type { ChaosSettings } from '../chaos/chaos.js';
import type { SandboxClock } from '../clock/clock.js';
import type { Deliveries, DeliveryRecord } from '../deliveries/delivery-record.js';
import { clockState, type ClockState } from '../routes/clock-route.js';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import type { ScorePoint, UserRecord } from '../users/user-store.js';

/** At most this many users (highest scores) and deliveries (newest) go to the dashboard. */
export const DASHBOARD_LIMITS = { users: 200, deliveries: 200, recentEvents: 5 } as const;

/** A user as the dashboard shows it. */
export interface DashboardUser {
  userId: string;
  score: number;
  tier: string;
  signals: string[];
  traits: Record<string, wire.Scalar | undefined>;
  /** The names of the last few events, newest last. */
  recentEvents: string[];
  /** The score over time, oldest first (bounded). */
  history: ScorePoint[];
}

/** A watch as the dashboard shows it. */
export interface DashboardWatch {
  userId: string;
  threshold: number;
  webhook: string;
  cooldown: string;
  /** When it last alerted, ISO 8601; `null` when never. */
  lastAlertAt: string | null;
}

/** Everything the dashboard shows: the answer of `GET /v1/sandbox/state`. */
export interface DashboardState {
  /** On the system clock `now` is `null`, so that the state (and its ETag) changes only with data. */
  clock: { mode: ClockState['mode']; now: string | null };
  chaos: ChaosSettings;
  users: DashboardUser[];
  usersTotal: number;
  watches: DashboardWatch[];
  /** Newest first. */
  deliveries: DeliveryRecord[];
  deliveriesTotal: number;
}

const toUser = (user: UserRecord): DashboardUser => ({
  userId: user.userId,
  score: user.risk.score,
  tier: user.risk.tier,
  signals: [...user.risk.signals],
  traits: { ...user.traits },
  recentEvents: user.events.slice(-DASHBOARD_LIMITS.recentEvents).map((event) => event.event),
  history: user.history.map((point) => ({ ...point })),
});

/** The dashboard's snapshot of a sandbox. */
export function dashboardState(
  clock: SandboxClock,
  service: ChurnRiskService,
  deliveries: Deliveries,
  chaos: ChaosSettings,
): DashboardState {
  const { mode, now } = clockState(clock);
  const users = [...service.users.all()].sort(
    (a, b) => b.risk.score - a.risk.score || (a.userId < b.userId ? -1 : 1),
  );
  const log = deliveries.list();
  return {
    clock: { mode, now: mode === 'manual' ? now : null },
    chaos: { ...chaos },
    users: users.slice(0, DASHBOARD_LIMITS.users).map(toUser),
    usersTotal: users.length,
    watches: service.watches.list().map((watch) => ({
      userId: watch.userId,
      threshold: watch.threshold,
      webhook: watch.webhook,
      cooldown: watch.cooldown,
      lastAlertAt:
        watch.lastAlertAt === undefined ? null : new Date(watch.lastAlertAt).toISOString(),
    })),
    deliveries: log.slice(-DASHBOARD_LIMITS.deliveries).reverse(),
    deliveriesTotal: log.length,
  };
}
