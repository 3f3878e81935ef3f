import type { AlertContext, ChurnRiskAlert } from '@churn-risk/core';

/**
 * The alert handler: one JSON line per alert, which CloudWatch Logs stores and Logs Insights can
 * query. Replace it with your own work (a CRM task, a Slack message...); keep it idempotent by
 * `context.id`, since the service redelivers an alert it got no `2xx` for.
 */
export function logAlert(alert: ChurnRiskAlert, context: AlertContext): void {
  console.log(
    JSON.stringify({
      message: 'churn_risk_alert',
      id: context.id,
      userId: alert.userId,
      tier: alert.tier,
      score: alert.score,
    }),
  );
}
