/**
 * The scoring model as data: every signal, its weight and the recommendation shown when it is the
 * dominant one. The package README reproduces this table; change both together.
 */

/** Where every score starts before signals are added. */
export const BASE_SCORE = 0.1;

/** Milliseconds in one day. */
export const DAY_MS = 86_400_000;

/** Events that count against a user, rather than as product activity. */
export const NEGATIVE_EVENTS = [
  'payment_failed',
  'plan_downgraded',
  'support_ticket_opened',
  'seat_removed',
] as const;

/** A negative event name. */
export type NegativeEvent = (typeof NEGATIVE_EVENTS)[number];

/** Negative events count when they happened within this many days. */
export const NEGATIVE_WINDOW_DAYS = 30;

/** Weight of one negative event, and how many of that kind count at most. */
export const NEGATIVE_WEIGHTS: Readonly<
  Record<NegativeEvent, { each: number; maxCounted: number }>
> = {
  payment_failed: { each: 0.2, maxCounted: 2 },
  plan_downgraded: { each: 0.15, maxCounted: 2 },
  support_ticket_opened: { each: 0.1, maxCounted: 3 },
  seat_removed: { each: 0.05, maxCounted: 4 },
};

/** Recency of the last activity event: the first row whose `minDays` is reached applies. */
export const INACTIVITY_STEPS = [
  { signal: 'inactive_30d', minDays: 30, weight: 0.35 },
  { signal: 'inactive_14d', minDays: 14, weight: 0.25 },
  { signal: 'inactive_7d', minDays: 7, weight: 0.15 },
] as const;

/** No activity event at all. */
export const NO_ACTIVITY_WEIGHT = 0.25;

/** Trend: the last 7 days hold fewer than `ratio` times the activity of the 7 days before. */
export const USAGE_DECLINE = { weight: 0.15, ratio: 0.5, minPreviousWeek: 3 } as const;

/** Plans that add risk, and plans that lower it (lowering factors produce no signal). */
export const FREE_PLANS: ReadonlySet<string> = new Set(['free', 'trial']);
export const FREE_PLAN_WEIGHT = 0.1;
export const ENTERPRISE_PLANS: ReadonlySet<string> = new Set(['enterprise']);
export const ENTERPRISE_PLAN_WEIGHT = -0.1;

/** Monthly recurring revenue: below `lowBelow` adds risk, at or above `highFrom` lowers it. */
export const MRR_RULES = {
  lowBelow: 50,
  lowWeight: 0.05,
  highFrom: 1000,
  highWeight: -0.05,
} as const;

/** Every signal identifier the sandbox produces. */
export type SignalId =
  | 'no_activity'
  | 'inactive_7d'
  | 'inactive_14d'
  | 'inactive_30d'
  | 'usage_declining'
  | NegativeEvent
  | 'free_plan'
  | 'low_mrr';

/**
 * The recommendation for each dominant signal. Keys are in tie-break order: when two signals add
 * the same weight, the one listed first is dominant.
 */
export const RECOMMENDATIONS: Readonly<Record<SignalId, string>> = {
  payment_failed: 'Payment failed: ask the customer to update their payment method.',
  plan_downgraded: 'Plan downgraded: ask what they no longer need and offer a plan that fits.',
  inactive_30d: 'Inactive for 30 days or more: reach out personally before the renewal date.',
  inactive_14d: 'Inactive for two weeks: send a re-engagement email with what is new.',
  inactive_7d: 'Quiet for a week: nudge with a tip for their most-used feature.',
  no_activity: 'No product activity yet: send an onboarding guide and offer a setup call.',
  usage_declining: 'Usage is dropping week over week: check in and show features they are missing.',
  support_ticket_opened: 'Open support issues: follow up to make sure they are resolved.',
  seat_removed: 'Seats removed: talk to the account owner about team adoption.',
  free_plan: 'On a free or trial plan: show the value of paid features.',
  low_mrr: 'Small account: point them to self-serve resources and success stories.',
};

/** The recommendation when no signal applies. */
export const HEALTHY_RECOMMENDATION = 'No action needed: engagement looks healthy.';

/** Tier boundaries: low < 0.4 <= medium < 0.7 <= high. */
export const TIER_BOUNDARIES = { medium: 0.4, high: 0.7 } as const;
