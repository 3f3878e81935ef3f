import { describe, expect, it } from 'vitest';
import { scoreUser, type ScoredEvent } from './score-user.js';
import { HEALTHY_RECOMMENDATION, RECOMMENDATIONS } from './signal-table.js';
import { tierFor } from './tier.js';

const NOW = Date.UTC(2025, 5, 15);
const DAY = 86_400_000;
const ago = (days: number, event = 'login'): ScoredEvent => ({ event, at: NOW - days * DAY });
const score = (events: ScoredEvent[], traits: Record<string, string | number> = {}) =>
  scoreUser({ traits, events }, NOW);

describe('scoreUser', () => {
  it('starts a user without events at base 0.1 + no_activity 0.25', () => {
    expect(score([])).toEqual({
      score: 0.35,
      tier: 'low',
      signals: ['no_activity'],
      recommendation: RECOMMENDATIONS.no_activity,
    });
  });

  it('rates a recently active user at the base score with the healthy recommendation', () => {
    expect(score([ago(0.5)])).toEqual({
      score: 0.1,
      tier: 'low',
      signals: [],
      recommendation: HEALTHY_RECOMMENDATION,
    });
  });

  it.each([
    [6.99, 0.1, []],
    [7, 0.25, ['inactive_7d']],
    [13.99, 0.25, ['inactive_7d']],
    [14, 0.35, ['inactive_14d']],
    [30, 0.45, ['inactive_30d']],
    [400, 0.45, ['inactive_30d']],
  ])('scores the last activity %s days ago as %s', (days, expected, signals) => {
    const result = score([ago(days), ago(days + 1)]);
    expect(result.score).toBe(expected);
    expect(result.signals).toEqual(signals);
  });

  it('flags usage_declining when this week has under half the activity of the week before (needing 3+)', () => {
    const previousWeek = [ago(8), ago(9), ago(10), ago(11)];
    expect(score([ago(1), ...previousWeek]).signals).toEqual(['usage_declining']);
    expect(score([ago(1), ...previousWeek]).score).toBe(0.25);
    expect(score([ago(1), ago(2), ...previousWeek]).signals).toEqual([]);
    expect(score([ago(1), ago(8), ago(9)]).signals).toEqual([]);
  });

  it.each([
    ['payment_failed', 0.2, 2],
    ['plan_downgraded', 0.15, 2],
    ['support_ticket_opened', 0.1, 3],
    ['seat_removed', 0.05, 4],
  ])('adds %s at %s each, counting at most %s within 30 days', (event, each, max) => {
    const active = [ago(0)];
    const one = score([...active, ago(1, event)]);
    expect(one.score).toBeCloseTo(0.1 + each, 10);
    expect(one.signals).toEqual([event]);
    const many = score([...active, ...Array.from({ length: max + 2 }, (_, i) => ago(i, event))]);
    expect(many.score).toBeCloseTo(Math.min(1, 0.1 + each * max), 10);
    expect(score([...active, ago(31, event)]).signals).toEqual([]);
  });

  it('does not count negative events as activity', () => {
    expect(score([ago(1, 'payment_failed')]).signals).toEqual(['no_activity', 'payment_failed']);
  });

  it('weighs plan and MRR', () => {
    const active = [ago(0)];
    expect(score(active, { plan: 'free' })).toMatchObject({ score: 0.2, signals: ['free_plan'] });
    expect(score(active, { plan: 'Trial' }).signals).toEqual(['free_plan']);
    expect(score(active, { mrr: 10 })).toMatchObject({ score: 0.15, signals: ['low_mrr'] });
    expect(score(active, { plan: 'enterprise' })).toMatchObject({ score: 0, signals: [] });
    expect(score([], { plan: 'enterprise', mrr: 5000 })).toMatchObject({
      score: 0.2,
      signals: ['no_activity'],
    });
  });

  it('orders signals strongest first and recommends for the dominant one', () => {
    const result = score([
      ago(20),
      ago(1, 'support_ticket_opened'),
      ago(1, 'payment_failed'),
      ago(2, 'payment_failed'),
    ]);
    expect(result.signals).toEqual(['payment_failed', 'inactive_14d', 'support_ticket_opened']);
    expect(result.recommendation).toBe(RECOMMENDATIONS.payment_failed);
    expect(result.score).toBe(0.85);
    expect(result.tier).toBe('high');
  });

  it('breaks a tie between equal weights by the table order', () => {
    // plan_downgraded twice (0.3) ties with support_ticket_opened three times (0.3).
    const result = score([
      ago(0),
      ...[1, 2, 3].map((d) => ago(d, 'support_ticket_opened')),
      ago(1, 'plan_downgraded'),
      ago(2, 'plan_downgraded'),
    ]);
    expect(result.signals.slice(0, 2)).toEqual(['plan_downgraded', 'support_ticket_opened']);
    expect(result.recommendation).toBe(RECOMMENDATIONS.plan_downgraded);
  });

  it('clamps at 1', () => {
    const events = [
      'payment_failed',
      'plan_downgraded',
      'support_ticket_opened',
      'seat_removed',
    ].flatMap((e) => [1, 2, 3, 4].map((d) => ago(d, e)));
    expect(score([ago(40), ...events], { plan: 'free', mrr: 0 }).score).toBe(1);
  });

  it('is deterministic and independent of event order', () => {
    const events = [
      ago(9),
      ago(3, 'payment_failed'),
      ago(10),
      ago(12),
      ago(11),
      ago(2, 'seat_removed'),
    ];
    const first = score(events, { plan: 'pro' });
    expect(score([...events].reverse(), { plan: 'pro' })).toEqual(first);
    expect(score(events, { plan: 'pro' })).toEqual(first);
  });

  it('lets negative events drive a healthy paying user from below 0.7 to high', () => {
    const events = [ago(1), ago(2)];
    const traits = { plan: 'pro', mrr: 99 };
    expect(score(events, traits).score).toBe(0.1);
    events.push(ago(0, 'payment_failed'), ago(0, 'payment_failed'), ago(0, 'plan_downgraded'));
    expect(score(events, traits).score).toBe(0.65);
    events.push(ago(0, 'support_ticket_opened'));
    expect(score(events, traits)).toMatchObject({ score: 0.75, tier: 'high' });
  });
});

describe('tierFor', () => {
  it.each([
    [0, 'low'],
    [0.39, 'low'],
    [0.4, 'medium'],
    [0.69, 'medium'],
    [0.7, 'high'],
    [1, 'high'],
  ] as const)('%s is %s', (value, tier) => {
    expect(tierFor(value)).toBe(tier);
  });
});
