import type { ChurnRiskAlert } from '@churn-risk/core';
import { TIER_BOUNDARIES } from './signal-table.js';

/** A risk tier. */
export type RiskTier = ChurnRiskAlert['tier'];

/** The tier of a score: low < 0.4 <= medium < 0.7 <= high. */
export function tierFor(score: number): RiskTier {
  if (score >= TIER_BOUNDARIES.high) return 'high';
  if (score >= TIER_BOUNDARIES.medium) return 'medium';
  return 'low';
}
