import type { ChurnRiskAlert, QueuedAlert } from '@churn-risk/core';

/** The BullMQ job name of an accepted alert. */
export const JOB_NAME = 'churn_risk_alert';
/** The BullMQ queue name under the prefix. */
export const QUEUE_NAME = 'alerts';

/** What a job holds: the queued alert and the handlers that already succeeded. */
export interface AlertJobData {
  id: string;
  alert: ChurnRiskAlert;
  receivedAt: number;
  traceContext?: Record<string, string>;
  /**
   * Keys of the handlers that succeeded in an earlier try (`TryOutcome.succeeded`): a retry, in any
   * worker and after a deploy, skips exactly these.
   */
  succeeded?: string[];
}

/** The queued alert of a job's data. */
export function toQueuedAlert(data: AlertJobData): QueuedAlert {
  const entry: QueuedAlert = { id: data.id, alert: data.alert, receivedAt: data.receivedAt };
  if (data.traceContext !== undefined) entry.traceContext = data.traceContext;
  return entry;
}
