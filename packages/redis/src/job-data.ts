import type { QueuedAlert } from '@churn-risk/core/store';

/** The BullMQ job name of an accepted alert. */
export const JOB_NAME = 'churn_risk_alert';
/** The BullMQ queue name under the prefix. */
export const QUEUE_NAME = 'alerts';

/**
 * What a job holds: the queued alert and the numbers core computed for it. The store
 * writes them as core gives them and counts nothing of its own.
 */
export interface AlertJobData extends QueuedAlert {
  /** Tries made (0 before the first), as core last wrote them. */
  tries: number;
  /** Ids of the handlers that succeeded in an earlier try: the next try skips exactly these. */
  succeeded: string[];
  /** How often a taker of the alert died, as core last wrote it (after a takeover). */
  stalls: number;
  /** When a retry of it falls due (`Date.now()` ms), written with the retry's delay. */
  dueAt?: number;
}

/** The queued alert of a job's data. */
export function toQueuedAlert(data: AlertJobData): QueuedAlert {
  const entry: QueuedAlert = { id: data.id, alert: data.alert, receivedAt: data.receivedAt };
  if (data.traceContext !== undefined) entry.traceContext = data.traceContext;
  return entry;
}
