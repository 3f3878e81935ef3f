import type * as wire from '@churn-risk/core/wire';
import {
  BASE_SCORE,
  DAY_MS,
  ENTERPRISE_PLANS,
  ENTERPRISE_PLAN_WEIGHT,
  FREE_PLANS,
  FREE_PLAN_WEIGHT,
  HEALTHY_RECOMMENDATION,
  INACTIVITY_STEPS,
  MRR_RULES,
  NEGATIVE_EVENTS,
  NEGATIVE_WEIGHTS,
  NEGATIVE_WINDOW_DAYS,
  NO_ACTIVITY_WEIGHT,
  RECOMMENDATIONS,
  USAGE_DECLINE,
  type NegativeEvent,
  type SignalId,
} from './signal-table.js';
import { tierFor, type RiskTier } from './tier.js';

/** One recorded event, as the scoring sees it. */
export interface ScoredEvent {
  /** Event name. */
  event: string;
  /** When it happened, ms since the epoch. */
  at: number;
}

/** What a score is computed from. */
export interface ScoreInput {
  /** The user's merged traits (`plan` and `mrr` matter). */
  traits: Readonly<Record<string, wire.Scalar | undefined>>;
  /** The user's events, in any order. */
  events: readonly ScoredEvent[];
}

/** A computed risk rating (the `RiskScore` of the API without `userId`). */
export interface ComputedRisk {
  score: number;
  tier: RiskTier;
  /** Signal identifiers, strongest first. */
  signals: SignalId[];
  recommendation: string;
}

/** Rounds to two decimals (every weight is a multiple of 0.05, so this removes float noise only). */
const round2 = (value: number): number => Math.round(value * 100) / 100;

const SIGNAL_ORDER = Object.keys(RECOMMENDATIONS) as SignalId[];
const isNegative = (name: string): name is NegativeEvent =>
  (NEGATIVE_EVENTS as readonly string[]).includes(name);

function activityContributions(events: readonly ScoredEvent[], now: number): Map<SignalId, number> {
  const found = new Map<SignalId, number>();
  const activity = events.filter((e) => !isNegative(e.event));
  if (activity.length === 0) return found.set('no_activity', NO_ACTIVITY_WEIGHT);
  const ageDays = (e: ScoredEvent): number => Math.max(0, now - e.at) / DAY_MS;
  const newestAge = Math.min(...activity.map(ageDays));
  const step = INACTIVITY_STEPS.find((s) => newestAge >= s.minDays);
  if (step) found.set(step.signal, step.weight);
  const thisWeek = activity.filter((e) => ageDays(e) < 7).length;
  const weekBefore = activity.filter((e) => ageDays(e) >= 7 && ageDays(e) < 14).length;
  if (weekBefore >= USAGE_DECLINE.minPreviousWeek && thisWeek < weekBefore * USAGE_DECLINE.ratio) {
    found.set('usage_declining', USAGE_DECLINE.weight);
  }
  return found;
}

function negativeContributions(events: readonly ScoredEvent[], now: number): Map<SignalId, number> {
  const found = new Map<SignalId, number>();
  for (const name of NEGATIVE_EVENTS) {
    const recent = events.filter(
      (e) => e.event === name && now - e.at <= NEGATIVE_WINDOW_DAYS * DAY_MS,
    ).length;
    const { each, maxCounted } = NEGATIVE_WEIGHTS[name];
    if (recent > 0) found.set(name, round2(each * Math.min(recent, maxCounted)));
  }
  return found;
}

function accountContributions(traits: ScoreInput['traits']): {
  risks: Map<SignalId, number>;
  relief: number;
} {
  const risks = new Map<SignalId, number>();
  let relief = 0;
  const plan = typeof traits['plan'] === 'string' ? traits['plan'].toLowerCase() : undefined;
  if (plan !== undefined && FREE_PLANS.has(plan)) risks.set('free_plan', FREE_PLAN_WEIGHT);
  if (plan !== undefined && ENTERPRISE_PLANS.has(plan)) relief += ENTERPRISE_PLAN_WEIGHT;
  const mrr = traits['mrr'];
  if (typeof mrr === 'number' && mrr >= 0 && mrr < MRR_RULES.lowBelow)
    risks.set('low_mrr', MRR_RULES.lowWeight);
  if (typeof mrr === 'number' && mrr >= MRR_RULES.highFrom) relief += MRR_RULES.highWeight;
  return { risks, relief };
}

/**
 * The sandbox's churn-risk model: a deterministic function of a user's traits and events relative
 * to `now` (see the signal table in the README). The same input and `now` always give the same result.
 */
export function scoreUser(input: ScoreInput, now: number): ComputedRisk {
  const { risks, relief } = accountContributions(input.traits);
  const contributions = new Map<SignalId, number>([
    ...activityContributions(input.events, now),
    ...negativeContributions(input.events, now),
    ...risks,
  ]);
  const total = [...contributions.values()].reduce(
    (sum, weight) => sum + weight,
    BASE_SCORE + relief,
  );
  const score = round2(Math.min(1, Math.max(0, total)));
  const signals = [...contributions.entries()]
    .sort(([a, wa], [b, wb]) => wb - wa || SIGNAL_ORDER.indexOf(a) - SIGNAL_ORDER.indexOf(b))
    .map(([signal]) => signal);
  const dominant = signals[0];
  return {
    score,
    tier: tierFor(score),
    signals,
    recommendation: dominant === undefined ? HEALTHY_RECOMMENDATION : RECOMMENDATIONS[dominant],
  };
}
