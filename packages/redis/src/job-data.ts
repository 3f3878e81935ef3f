import type { ChurnRiskAlert, QueuedAlert } from '@churn-risk/core';

/** The BullMQ job name of an accepted alert. */
export const JOB_NAME = 'churn_risk_alert';
/** The BullMQ queue name under the prefix. */
export const QUEUE_NAME = 'alerts';

/** What a job holds: the queued alert, the tries made and the handlers that already succeeded. */
export interface AlertJobData {
  id: string;
  alert: ChurnRiskAlert;
  receivedAt: number;
  traceContext?: Record<string, string>;
  /** Tries made (absent before the first one, and in jobs stored by 0.x: BullMQ's count then). */
  tries?: number;
  /**
   * Ids of the handlers that succeeded in an earlier try (`TryVerdict.succeeded`): a retry, in
   * any worker and after any deploy, skips exactly these.
   */
  handlers?: string[];
  /**
   * 0.x recorded source-hash keys here. They name no handler id, so every handler of such an
   * alert runs on its next try (see the changeset of 0.2); the field is dropped then.
   */
  succeeded?: string[];
}

/** The queued alert of a job's data. */
export function toQueuedAlert(data: AlertJobData): QueuedAlert {
  const entry: QueuedAlert = { id: data.id, alert: data.alert, receivedAt: data.receivedAt };
  if (data.traceContext !== undefined) entry.traceContext = data.traceContext;
  return entry;
}
