import type { ChurnRiskAlert } from '@churn-risk/core';
import type { ComputedRisk } from '../scoring/score-user.js';

/** The `churn_risk_alert` payload, triggered at `now`. */
export function buildAlert(userId: string, risk: ComputedRisk, now: number): ChurnRiskAlert {
  return {
    event: 'churn_risk_alert',
    userId,
    score: risk.score,
    tier: risk.tier,
    signals: [...risk.signals],
    recommendation: risk.recommendation,
    triggeredAt: new Date(now).toISOString(),
  };
}
